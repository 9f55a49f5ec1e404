// `vite dev`: the hooks.ws route and event.platform before any build. A Tachyon App runs
// beside Vite's dev server on a loopback port; WebSocket upgrades for the route's path on
// Vite's HTTP server are piped to it byte for byte, so the browser connects to the same
// URL as in production. SvelteKit's dev server asks the adapter's `emulate().platform()`
// for event.platform, which publishes through that App.
//
// Editing hooks.ws.ts (or a module it imports) reloads it: a new App with the new hooks
// starts on another loopback port, new upgrades go to it, and the old one closes its sockets
// with 1001 (clients reconnect, to the new hooks). A Tachyon App's routes are fixed once it
// listens, so swapping the App is what keeps each connection on one consistent behavior.
import { connect } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { resolveHooksFile } from './vite-plugin.ts';

interface ModuleNode {
  file: string | null;
  importers: Set<ModuleNode>;
}

/** The subset of Vite's ViteDevServer used here. */
export interface DevServerLike {
  config: { root: string; logger?: { info(msg: string): void; error(msg: string): void } };
  httpServer: {
    on(event: 'upgrade', listener: (req: IncomingMessage, socket: Duplex, head: Buffer) => void): unknown;
    once(event: 'close', listener: () => void): unknown;
  } | null;
  ssrLoadModule(url: string): Promise<Record<string, unknown>>;
  watcher?: { on(event: 'change', listener: (file: string) => void): unknown };
  moduleGraph?: { getModulesByFile(file: string): Set<ModuleNode> | undefined; invalidateModule(mod: ModuleNode): void };
}

interface Running {
  app: import('@tachyon/server').App;
  port: number;
  close(): Promise<void>;
}

interface DevState {
  /** The App serving new upgrades (replaced when hooks.ws changes). */
  current: Running;
  /** event.platform, kept here so any copy of this module finds it through the global slot. */
  platform: unknown;
  close(): Promise<void>;
}

// One dev realtime server per process, shared by the plugin (which starts it) and the
// adapter's emulate() (which SvelteKit may have loaded through another module instance).
const SLOT = Symbol.for('@tachyon/sveltekit/dev');
type Slot = { [SLOT]?: DevState };

/** event.platform in dev (undefined while the dev realtime server is not running, e.g. during builds). */
export function devPlatform(): unknown {
  const state = (globalThis as Slot)[SLOT];
  return state?.platform;
}

/** True when `changed` is `hooksFile` or a module it imports, directly or not (Vite's module graph). */
function affects(server: DevServerLike, changed: string, hooksFile: string): boolean {
  if (changed === hooksFile) return true;
  const graph = server.moduleGraph;
  if (graph === undefined) return false;
  const seen = new Set<ModuleNode>();
  const queue = [...(graph.getModulesByFile(changed) ?? [])];
  while (queue.length > 0) {
    const mod = queue.pop()!;
    if (seen.has(mod)) continue;
    seen.add(mod);
    if (mod.file === hooksFile) return true;
    queue.push(...mod.importers);
  }
  return false;
}

export async function startDevRealtime(server: DevServerLike, ws: { path: string; hooks: string }): Promise<void> {
  const http = server.httpServer;
  if (http === null) return; // middleware mode: the host server owns upgrades
  const file = resolveHooksFile(server.config.root, ws.hooks);
  const [{ App }, runtime] = await Promise.all([import('@tachyon/server'), import('../runtime/index.ts')]);
  await (globalThis as Slot)[SLOT]?.close();

  const boot = async (): Promise<Running> => {
    const app = new App();
    if (file !== undefined) runtime.installWebSocket(app, ws.path, await server.ssrLoadModule(file), ws.hooks);
    const listening = await app.listen(0, '127.0.0.1');
    return { app, port: listening.port, close: () => listening.close({ timeout: 1000 }) };
  };
  const first = await boot();
  const state: DevState = {
    current: first,
    platform: runtime.platformFor(first.app),
    close: () => state.current.close(),
  };
  (globalThis as Slot)[SLOT] = state;
  http.once('close', () => {
    if ((globalThis as Slot)[SLOT] === state) delete (globalThis as Slot)[SLOT];
    void state.close();
  });

  // Reloads are serialized: a burst of saves ends with the last version serving.
  let reloading: Promise<void> = Promise.resolve();
  const reload = async () => {
    for (const mod of server.moduleGraph?.getModulesByFile(file!) ?? []) server.moduleGraph!.invalidateModule(mod);
    let next: Running;
    try {
      next = await boot();
    } catch (err) {
      server.config.logger?.error(
        `@tachyon/sveltekit: ${ws.hooks} failed to reload, the previous version keeps serving: ${(err as Error)?.stack ?? String(err)}`,
      );
      return;
    }
    const old = state.current;
    state.current = next;
    state.platform = runtime.platformFor(next.app);
    server.config.logger?.info(`@tachyon/sveltekit: ${ws.hooks} reloaded; open sockets reconnect (1001)`);
    await old.close();
  };
  if (file !== undefined) {
    server.watcher?.on('change', (changed) => {
      if (!affects(server, changed, file)) return;
      reloading = reloading.then(reload);
    });
  }

  http.on('upgrade', (req, socket, head) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== ws.path) return; // Vite's HMR socket and others
    const upstream = connect(state.current.port, '127.0.0.1', () => {
      let head0 = `${req.method} ${req.url} HTTP/1.1\r\n`;
      for (let i = 0; i < req.rawHeaders.length; i += 2) head0 += `${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\r\n`;
      upstream.write(head0 + '\r\n');
      if (head.length > 0) upstream.write(head);
      socket.pipe(upstream).pipe(socket);
    });
    const destroy = () => {
      socket.destroy();
      upstream.destroy();
    };
    upstream.on('error', destroy);
    socket.on('error', destroy);
    socket.on('close', () => upstream.destroy());
    upstream.on('close', () => socket.destroy());
  });
  server.config.logger?.info(
    `@tachyon/sveltekit: realtime at ${ws.path}${file ? '' : ` (no ${ws.hooks} file: connections are accepted, no hooks)`}`,
  );
}
