// dashboard(): a live page about a running app (docs/dashboard.md), built on @tachyon/server's
// public API only. The page (assets.ts) opens a WebSocket on this app; while at least one is
// open, the collector (collector.ts) counts and a timer sends the page a view (view.ts) each
// interval, gathered from every worker of a cluster through app.cluster.request(). With no
// page open nothing is collected and no timer runs. What an operator may do from the page
// (disconnect a socket, drain a worker) is in actions.ts, off unless `actions: true`.
import { App, HttpError, defineMiddleware, definePlugin, type Request, type Scope } from '@tachyon/server';
import { actionEvents, disconnectHere } from './actions.ts';
import { CSP, loadAssets } from './assets.ts';
import { Collector, type WorkerSnapshot } from './collector.ts';
import { Reader } from './view.ts';

export type { DashboardView, RouteView, WorkerView } from './view.ts';
export type { WorkerSnapshot } from './collector.ts';
export { DISCONNECT_CODE } from './actions.ts';

export interface DashboardOptions {
  /** Where the page is served; its WebSocket is `${path}/ws`. Default `/_tachyon`. */
  path?: string;
  /**
   * Decides who may see the page and open its WebSocket: return true to let the request in,
   * false for 403, or throw an HttpError (e.g. 401 with a `www-authenticate` header). Required
   * unless the app listens on loopback only (127.0.0.1, ::1, localhost): without it, listen()
   * (or cluster()) on another host rejects before it binds.
   */
  auth?: (req: Request) => boolean | Promise<boolean>;
  /** Let the page disconnect a socket and drain a cluster worker (app.cluster.drain()). Default false: read-only. */
  actions?: boolean;
  /** Milliseconds between updates (250 to 60000). Default 1000. */
  interval?: number;
}

/** The cluster channel through which workers read each other (and act on a socket). */
const CHANNEL = 'tachyon:dashboard';
const KNOWN = new Set(['path', 'auth', 'actions', 'interval']);

const isLoopback = (host: string) => host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);

/** `await app.register(dashboard({ auth }))`: the page at `/_tachyon`. */
export function dashboard(options: DashboardOptions = {}) {
  if (typeof options !== 'object' || options === null) throw new TypeError('dashboard(): options must be an object');
  for (const key of Object.keys(options)) if (!KNOWN.has(key)) throw new TypeError(`dashboard(): unknown option "${key}"`);
  const base = options.path ?? '/_tachyon';
  if (typeof base !== 'string' || !/^(\/[A-Za-z0-9._~-]+)+$/.test(base))
    throw new TypeError('dashboard(): path must look like "/_tachyon" (segments of letters, digits and ._~-, no trailing slash)');
  const auth = options.auth;
  if (auth !== undefined && typeof auth !== 'function') throw new TypeError('dashboard(): auth must be a function (req) => boolean');
  const actions = options.actions ?? false;
  if (typeof actions !== 'boolean') throw new TypeError('dashboard(): actions must be a boolean');
  const interval = options.interval ?? 1000;
  if (typeof interval !== 'number' || !Number.isInteger(interval) || interval < 250 || interval > 60_000)
    throw new TypeError('dashboard(): interval must be a whole number of milliseconds from 250 to 60000');

  return definePlugin({ name: '@tachyon/dashboard', global: true }, (scope: Scope) => {
    if (!(scope instanceof App)) throw new TypeError('dashboard(): register it on the app: app.register(dashboard(...))');
    const app = scope;
    // Without auth the page is for this machine only: listen() (and a cluster's start) is
    // refused before it binds beyond loopback. Until it listens on loopback the page answers
    // 403 (app.request() alone never listens): a second line, should a listen skip the hooks.
    let refusal: string | null = auth === undefined ? 'not listening on loopback' : null;
    if (auth === undefined) {
      app.addHook('onBeforeListen', ({ host }) => {
        if (!isLoopback(host))
          throw new Error(
            `dashboard(): no auth hook, and the app would listen on ${host}: give dashboard({ auth }), or listen on 127.0.0.1 or ::1 only`,
          );
        refusal = null;
      });
    }
    const guard = async (req: Request): Promise<void> => {
      if (refusal !== null) throw new HttpError(403, `dashboard disabled: ${refusal}`, { expose: true });
      if (auth !== undefined && (await auth(req)) !== true) throw new HttpError(403, 'Forbidden');
    };

    const assets = loadAssets(base);
    const collector = new Collector(app, base, actions);
    const reader = new Reader(actions);
    app.use(
      defineMiddleware(collector.middleware, (api) => {
        collector.ws = api.websocketCounters();
      }),
    );
    app.addHook('onSocketClose', collector.socketClosed);

    for (const [path, asset] of assets) {
      app.get(path, async (req, res) => {
        await guard(req);
        res
          .header('content-type', asset.type)
          .header('content-security-policy', CSP)
          .header('x-content-type-options', 'nosniff')
          .header('referrer-policy', 'no-referrer')
          .header('cache-control', 'no-store')
          .end(asset.body);
      });
    }

    app.cluster.handle(CHANNEL, (data: { op?: unknown; id?: unknown }) => {
      if (data?.op === 'snapshot') {
        collector.touchedRemotely();
        return collector.snapshot();
      }
      if (data?.op === 'disconnect' && actions && typeof data.id === 'number') return disconnectHere(app, data.id);
      throw new Error('dashboard: unknown request');
    });

    let timer: NodeJS.Timeout | null = null;
    let busy = false;
    const tick = async (): Promise<void> => {
      if (busy) return; // a slow worker must not pile up reads
      busy = true;
      try {
        const snapshots: WorkerSnapshot[] = [await collector.snapshot()];
        const missing: number[] = [];
        const workers = app.cluster.workers;
        const others = Array.from({ length: workers }, (_, i) => i + 1).filter((w) => w !== app.worker);
        await Promise.all(
          others.map((w) =>
            app.cluster.request<WorkerSnapshot>(w, CHANNEL, { op: 'snapshot' }, { timeout: Math.max(interval - 100, 200) }).then(
              (s) => void snapshots.push(s),
              () => void missing.push(w),
            ),
          ),
        );
        const view = reader.view(snapshots, workers, missing.sort());
        for (const ws of collector.pages) ws.send('stats', view);
      } catch (err) {
        app.logger.error({ err }, 'dashboard: collecting failed');
      } finally {
        busy = false;
      }
    };

    app.ws<{ ip: string }>(`${base}/ws`, {
      upgrade: async (req) => {
        await guard(req);
        return { ip: req.ip };
      },
      open(ws) {
        collector.pageOpened(ws);
        if (timer === null) timer = setInterval(tick, interval);
        void tick();
      },
      close(ws) {
        collector.pageClosed(ws);
        if (collector.pages.size === 0 && timer !== null) {
          clearInterval(timer);
          timer = null;
        }
      },
      // Nothing to subscribe to: the page gets its view by direct sends.
      subscribe: () => false,
      maxPayloadLength: 1024,
      events: actionEvents(app, actions, CHANNEL),
    });
    app.onClose(() => {
      if (timer !== null) clearInterval(timer);
      timer = null;
    });
  });
}
