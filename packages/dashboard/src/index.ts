// dashboard(): a live page about a running app (docs/dashboard.md), built on @tachyon/server's
// public API only. The page (assets.ts) opens a WebSocket on this app; while at least one is
// open, the collector (collector.ts) counts and a timer sends the page a view (view.ts) each
// interval, gathered from every worker of a cluster through app.cluster.request(). With no
// page open nothing is collected and no timer runs.
import { App, HttpError, defineMiddleware, definePlugin, type Request, type Scope, type Socket } from '@tachyon/server';
import { CSP, loadAssets } from './assets.ts';
import { Collector, type WorkerSnapshot } from './collector.ts';
import { Reader } from './view.ts';

export type { DashboardView, RouteView, WorkerView } from './view.ts';
export type { WorkerSnapshot } from './collector.ts';

export interface DashboardOptions {
  /** Where the page is served; its WebSocket is `${path}/ws`. Default `/_tachyon`. */
  path?: string;
  /**
   * Decides who may see the page and open its WebSocket: return true to let the request in,
   * false for 403, or throw an HttpError (e.g. 401 with a `www-authenticate` header). Required
   * unless the app listens on loopback only (127.0.0.1, ::1, localhost).
   */
  auth?: (req: Request) => boolean | Promise<boolean>;
  /** Let the page disconnect a socket. Default false: read-only. */
  actions?: boolean;
  /** Milliseconds between updates (250 to 60000). Default 1000. */
  interval?: number;
}

/** The cluster channel through which workers read each other (and act on a socket). */
const CHANNEL = 'tachyon:dashboard';
/** The close code of a socket disconnected from the page: 1008 (policy), which @tachyon/client does not retry. */
export const DISCONNECT_CODE = 1008;
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
    // Without auth the page is for this machine only. A cluster's workers never learn the
    // host the acceptor listens on, so there it always needs auth: refuse now, before start.
    if (auth === undefined && app.worker !== 0)
      throw new TypeError('dashboard(): give an auth hook (under cluster() the dashboard cannot tell whether it listens on loopback only)');
    /** Why the page is refused (no auth and not loopback only), once the app listens. */
    let refusal: string | null = auth === undefined ? 'not listening yet' : null;
    if (auth === undefined) {
      app.addHook('onListen', ({ host }) => {
        if (isLoopback(host)) refusal = null;
        else {
          refusal = `listening on ${host} without an auth hook`;
          app.logger.error({ host, path: base }, 'dashboard: refusing to serve: no auth hook and the app listens beyond loopback');
        }
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

    const disconnect = (id: number): boolean => {
      for (const s of app.sockets()) {
        if (s.id !== id) continue;
        s.close(DISCONNECT_CODE, 'disconnected from the dashboard');
        return true;
      }
      return false;
    };
    app.cluster.handle(CHANNEL, (data: { op?: unknown; id?: unknown }) => {
      if (data?.op === 'snapshot') {
        collector.touchedRemotely();
        return collector.snapshot();
      }
      if (data?.op === 'disconnect' && actions && typeof data.id === 'number') return disconnect(data.id);
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
      events: {
        disconnect: {
          handler: async (ws: Socket<{ ip: string }>, data: unknown) => {
            if (!actions) throw new HttpError(403, 'actions are off (dashboard({ actions: true }) turns them on)', { expose: true });
            const { worker, id } = (data ?? {}) as { worker?: unknown; id?: unknown };
            if (!Number.isInteger(worker) || !Number.isInteger(id) || (id as number) < 1)
              throw new HttpError(400, 'disconnect needs { worker, id }: whole numbers', { expose: true });
            const workers = app.cluster.workers;
            if (workers === 0 ? worker !== 0 : (worker as number) < 1 || (worker as number) > workers)
              throw new HttpError(400, `no worker ${worker} (${workers === 0 ? 'only 0 outside a cluster' : `1 to ${workers}`})`, {
                expose: true,
              });
            let closed: boolean;
            try {
              closed =
                worker === app.worker
                  ? disconnect(id as number)
                  : await app.cluster.request<boolean>(worker as number, CHANNEL, { op: 'disconnect', id });
            } catch (err) {
              throw new HttpError(503, `worker ${worker} did not answer: ${(err as Error).message}`, { expose: true, cause: err });
            }
            app.logger.info({ worker, socket: id, closed, by: ws.data.ip }, 'dashboard: socket disconnected by an operator');
            return { closed };
          },
        },
      },
    });
    app.onClose(() => {
      if (timer !== null) clearInterval(timer);
      timer = null;
    });
  });
}
