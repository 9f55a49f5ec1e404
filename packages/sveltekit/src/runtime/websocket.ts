// src/hooks.ws.ts → a Tachyon WebSocket route. The file's named exports are the route's
// hooks (upgrade, open, subscribe, events, message, drain, close); `export const options`
// carries the route's limits (maxPayloadLength, idleTimeout, allowedOrigins, …);
// `export const topics` declares topic options (`{ 'room:*': { presence: true } }`: app.topic).
import type { App, TopicOptions, WsBehavior } from '@tachyon/server';
import { serveOtherWorkers } from './across-workers.ts';
import { registryOf, tracked } from './sockets.ts';

const HOOKS = ['upgrade', 'open', 'subscribe', 'events', 'message', 'drain', 'close'] as const;

/** The module `src/hooks.ws.ts` compiles to. */
export type WsHooksModule = Partial<Pick<WsBehavior<any, any>, (typeof HOOKS)[number]>> & {
  options?: Omit<WsBehavior<any, any>, (typeof HOOKS)[number]>;
  /** Topic options by pattern (history, presence): `app.topic(pattern, options)` for each. */
  topics?: Record<string, TopicOptions>;
  [other: string]: unknown;
};

/** The route's behaviour, from the module's exports. Throws on exports of the wrong type, naming the file. */
export function behaviorFromHooks(mod: WsHooksModule, file = 'src/hooks.ws'): WsBehavior<any, any> {
  const behavior: Record<string, unknown> = {};
  if (mod.options !== undefined) {
    if (typeof mod.options !== 'object' || mod.options === null) throw new TypeError(`${file}: "options" must be an object`);
    for (const key of HOOKS)
      if (key in mod.options) throw new TypeError(`${file}: "${key}" belongs in its own named export, not in "options"`);
    Object.assign(behavior, mod.options);
  }
  for (const key of HOOKS) {
    const value = mod[key];
    if (value === undefined) continue;
    const ok = key === 'events' ? typeof value === 'object' && value !== null : typeof value === 'function';
    if (!ok) throw new TypeError(`${file}: the "${key}" export must be ${key === 'events' ? 'an object of events' : 'a function'}`);
    behavior[key] = value;
  }
  return behavior as WsBehavior<any, any>;
}

export function installWebSocket(app: App, path: string, mod: WsHooksModule | null | undefined, file?: string): void {
  if (!mod) return;
  const behavior = behaviorFromHooks(mod, file);
  if (mod.topics !== undefined) {
    if (typeof mod.topics !== 'object' || mod.topics === null || Array.isArray(mod.topics))
      throw new TypeError(`${file ?? 'src/hooks.ws'}: "topics" must be an object of topic options by pattern`);
    for (const [pattern, options] of Object.entries(mod.topics)) app.topic(pattern, options);
  }
  // event.platform.send / sendTo / pressure reach this route's sockets.
  // (under WORKERS, the other workers' ones too: across-workers.ts).
  const registry = registryOf(app);
  app.ws(path, tracked(behavior, registry));
  serveOtherWorkers(app, registry);
}
