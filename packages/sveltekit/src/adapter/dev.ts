// `vite dev`: the hooks.ws route and event.platform before any build. A Tachyon App runs
// beside Vite's dev server on a loopback port; WebSocket upgrades for the route's path on
// Vite's HTTP server are piped to it byte for byte, so the browser connects to the same
// URL as in production. SvelteKit's dev server asks the adapter's `emulate().platform()`
// for event.platform, which publishes through that App.
import { connect } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { resolveHooksFile } from './vite-plugin.ts';

/** The subset of Vite's ViteDevServer used here. */
export interface DevServerLike {
  config: { root: string; logger?: { info(msg: string): void; error(msg: string): void } };
  httpServer: { on(event: 'upgrade', listener: (req: IncomingMessage, socket: Duplex, head: Buffer) => void): unknown; once(event: 'close', listener: () => void): unknown } | null;
  ssrLoadModule(url: string): Promise<Record<string, unknown>>;
}

interface DevState {
  app: import('@tachyon/server').App;
  /** event.platform, kept here so any copy of this module finds it through the global slot. */
  platform: unknown;
  port: number;
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

export async function startDevRealtime(server: DevServerLike, ws: { path: string; hooks: string }): Promise<void> {
  const http = server.httpServer;
  if (http === null) return; // middleware mode: the host server owns upgrades
  const file = resolveHooksFile(server.config.root, ws.hooks);
  const [{ App }, runtime] = await Promise.all([import('@tachyon/server'), import('../runtime/index.ts')]);
  await (globalThis as Slot)[SLOT]?.close();
  const app = new App();
  if (file !== undefined) {
    const mod = await server.ssrLoadModule(file);
    app.ws(ws.path, runtime.behaviorFromHooks(mod, ws.hooks));
  }
  const listening = await app.listen(0, '127.0.0.1');
  const state: DevState = { app, platform: runtime.platformFor(app), port: listening.port, close: () => listening.close({ timeout: 1000 }) };
  (globalThis as Slot)[SLOT] = state;
  http.once('close', () => {
    if ((globalThis as Slot)[SLOT] === state) delete (globalThis as Slot)[SLOT];
    void state.close();
  });
  http.on('upgrade', (req, socket, head) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== ws.path) return; // Vite's HMR socket and others
    const upstream = connect(state.port, '127.0.0.1', () => {
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
  server.config.logger?.info(`@tachyon/sveltekit: realtime at ${ws.path}${file ? '' : ` (no ${ws.hooks} file: connections are accepted, no hooks)`}`);
}
