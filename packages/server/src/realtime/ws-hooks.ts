// WebSocket lifecycle hooks (docs/hooks.md): app-level (`app.addHook('onOpen', fn)`) and per
// route (`app.ws(path, { hooks: { onEvent: [fn] } })`), app's first. Gathered once per route at
// startup; a route without them runs exactly as before (each point is one length check).
import type { Request } from '../http/io/request.ts';
import { HttpError } from '../http/errors.ts';
import type { Socket } from './socket.ts';
import type { EventOutcome } from './event-outcome.ts';
import { WS_HOOKS } from '../core/hook-names.ts';

export interface WsHooks {
  /** Before the route's `upgrade`: may refuse (return false: 403, or throw an HttpError). */
  onUpgrade: (req: Request) => unknown;
  /**
   * The handshake was decided (after the onUpgrade hooks and the route's `upgrade`): accepted
   * (status 101, or 200 for a fallback session, with the socket), refused (the status sent,
   * the error), or 0 when the client left first. Observes; errors are logged.
   */
  onUpgradeEnd: (req: Request, outcome: UpgradeOutcome) => unknown;
  /** A socket opened (before the route's `open`). Errors are logged. */
  onOpen: (ws: Socket<any>) => unknown;
  /** Before an event's validation and handler: may refuse (return false, or throw: an error reply). */
  onEvent: (ws: Socket<any>, event: string, data: unknown) => unknown;
  /**
   * Around each event frame (event-outcome.ts): call `run()` once, synchronously or later;
   * it runs the onEvent hooks, validation and the handler, and returns the outcome (or a
   * promise of it, never rejected) once the reply or error was sent. What the wrapper's
   * context holds (an AsyncLocalStorage store, a tracing span) is active for all of it.
   */
  aroundEvent: (ws: Socket<any>, event: string, run: () => EventOutcome | Promise<EventOutcome>) => unknown;
  /** A socket closed (before the route's `close`). Errors are logged. */
  onSocketClose: (ws: Socket<any>, code: number, reason: string) => unknown;
}

/** How a WebSocket handshake ended (the onUpgradeEnd hook). */
export interface UpgradeOutcome {
  /** 101 (upgraded), 200 (a fallback transport session), the refusal's status, or 0 when the client left before the decision. */
  readonly status: number;
  /** The socket, when accepted (before its `open`: sends wait for onOpen); null otherwise. */
  readonly socket: Socket<any> | null;
  /** What refused the upgrade (an HttpError, a hook's error); undefined when accepted or left. */
  readonly error: unknown;
}

export type WsHookName = keyof WsHooks;
export type WsHookLists = { [K in WsHookName]: WsHooks[K][] };
/** A route's own WebSocket hooks: one function or a list per name. */
export type WsRouteHooks = { [K in WsHookName]?: WsHooks[K] | WsHooks[K][] };

export const WS_HOOK_NAMES: ReadonlySet<string> = new Set<WsHookName>(WS_HOOKS);

export function emptyWsHooks(): WsHookLists {
  return { onUpgrade: [], onUpgradeEnd: [], onOpen: [], onEvent: [], aroundEvent: [], onSocketClose: [] };
}

/** Checks a ws route's `hooks` option; `fail` throws with the route named. */
export function checkWsRouteHooks(hooks: unknown, fail: (msg: string) => never): void {
  if (hooks === undefined) return;
  if (typeof hooks !== 'object' || hooks === null) fail('hooks must be an object like { onEvent: [fn] }');
  for (const [name, value] of Object.entries(hooks as object)) {
    if (!WS_HOOK_NAMES.has(name)) fail(`unknown hook "${name}" (WebSocket route hooks: ${[...WS_HOOK_NAMES].join(', ')})`);
    for (const fn of Array.isArray(value) ? value : [value])
      if (typeof fn !== 'function') fail(`hook "${name}" must be a function, got ${fn === null ? 'null' : typeof fn}`);
  }
}

/** The app's hooks, then the route's own. */
export function wsHooksFor(app: WsHookLists, route: WsRouteHooks | undefined): WsHookLists {
  if (route === undefined) return app;
  const out = { ...app };
  for (const name of WS_HOOK_NAMES as Set<WsHookName>) {
    const own = route[name];
    if (own !== undefined) (out as Record<string, unknown[]>)[name] = [...app[name], ...(Array.isArray(own) ? own : [own])];
  }
  return out;
}

/**
 * Runs gate hooks in order (onUpgrade, onEvent): undefined when all passed synchronously, a
 * promise when one was async; a hook that returns false refuses with `refusal()`, one that
 * throws or rejects refuses with its error.
 */
export function runGate(
  list: readonly ((a: any, b?: any, c?: any) => unknown)[],
  refusal: () => Error,
  a: unknown,
  b?: unknown,
  c?: unknown,
  from = 0,
): Promise<void> | undefined {
  for (let i = from; i < list.length; i++) {
    const out = list[i]!(a, b, c);
    if (out === false) throw refusal();
    if (out instanceof Promise || typeof (out as PromiseLike<unknown> | null)?.then === 'function') {
      return Promise.resolve(out).then((v) => {
        if (v === false) throw refusal();
        return runGate(list, refusal, a, b, c, i + 1);
      });
    }
  }
  return undefined;
}

export const upgradeRefused = (): Error => new HttpError(403, 'Upgrade refused');
export const eventRefused = (): Error => new HttpError(403, 'Event refused');
