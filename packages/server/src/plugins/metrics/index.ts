// Prometheus metrics (docs/metrics.md) with prom-client: `GET /metrics` answers the text
// format; every other request is counted by route pattern (req.route, never the raw path:
// bounded cardinality), method and status, timed, and tracked in flight. The counting is
// plain arithmetic (http-series.ts); prom-client formats only when scraped. WebSocket
// messages, publishes and slow consumers are counted by the app's hub once this middleware is
// installed with app.use() (ws-series.ts), through the setup the app runs at start.
import { performance } from 'node:perf_hooks'; // the binding: the global is an accessor, slower per call
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { AppView } from '../../core/settings.ts';
import type { Request } from '../../http/io/request.ts';
import type { Response } from '../../http/io/response.ts';
import type { Middleware } from '../../http/types.ts';
import { DEFAULT_BUCKETS, HttpSeries } from './http-series.ts';
import { registerWsSeries } from './ws-series.ts';
import { WsStats } from '../../realtime/stats.ts';
import { defineMiddleware, type WebSocketCounters } from '../../core/middleware-setup.ts';
import { ClusterSeries } from './cluster-series.ts';
import { checkKnownKeys } from '../../core/options-check.ts';

export interface MetricsOptions {
  /** Where Prometheus scrapes. Default `/metrics`. */
  path?: string;
  /** A prom-client Registry (pass prom-client's `register` to serve your own metrics too). Default: a new one. */
  registry?: Registry;
  /** Prepended to every metric name, e.g. `myapp_`. Default none. */
  prefix?: string;
  /** prom-client's default process metrics, event-loop delay included. Default true. */
  defaultMetrics?: boolean;
  /** Duration histogram bounds in seconds. */
  buckets?: readonly number[];
  /**
   * In a cluster: how long (ms) a scrape waits for the other workers' metrics before it answers
   * without the missing ones (counted in `cluster_metrics_workers_missing`). Default 1000.
   */
  clusterTimeout?: number;
}

/** The middleware, with the registry it serves. */
export type MetricsMiddleware = Middleware & { readonly registry: Registry };

const KNOWN = new Set(['path', 'registry', 'prefix', 'defaultMetrics', 'buckets', 'clusterTimeout']);

/** `app.use(metrics())`: add it first so it times everything after it. */
export function metrics(options: MetricsOptions = {}): MetricsMiddleware {
  if (typeof options !== 'object' || options === null) throw new TypeError('metrics(): options must be an object');
  checkKnownKeys('metrics()', options, KNOWN);
  const path = options.path ?? '/metrics';
  if (typeof path !== 'string' || !path.startsWith('/') || /[?#\s]/.test(path)) throw new TypeError('metrics(): path must start with "/"');
  const prefix = options.prefix ?? '';
  if (typeof prefix !== 'string' || !/^([a-zA-Z_:][a-zA-Z0-9_:]*)?$/.test(prefix))
    throw new TypeError('metrics(): prefix must be a valid Prometheus name prefix, e.g. "myapp_"');
  const registry = options.registry ?? new Registry();
  if (!(registry instanceof Registry)) throw new TypeError('metrics(): registry must be a prom-client Registry');
  const buckets = options.buckets ?? DEFAULT_BUCKETS;
  if (
    !Array.isArray(buckets) ||
    buckets.length === 0 ||
    buckets.some((b, i) => typeof b !== 'number' || !Number.isFinite(b) || b <= 0 || (i > 0 && b <= buckets[i - 1]!))
  ) {
    throw new TypeError('metrics(): buckets must be increasing positive numbers of seconds');
  }
  const clusterTimeout = options.clusterTimeout ?? 1000;
  if (typeof clusterTimeout !== 'number' || !Number.isInteger(clusterTimeout) || clusterTimeout < 0 || clusterTimeout > 60_000) {
    throw new TypeError('metrics(): clusterTimeout must be a whole number of milliseconds from 0 to 60000');
  }
  if (registry.getSingleMetric(`${prefix}http_requests_total`))
    throw new TypeError('metrics(): this registry already has Tachyon metrics with this prefix (one metrics() per registry)');

  const series = new HttpSeries(buckets);
  series.register(registry, prefix);
  // Zeros until the app that installs this middleware hands over its counters, at start.
  let wsStats: WebSocketCounters = new WsStats();
  registerWsSeries(registry, prefix, () => wsStats);
  let inflight = 0;
  // The app is known only from a request; the scrape itself provides it.
  let app: AppView | undefined;
  new Gauge({
    name: `${prefix}http_requests_in_flight`,
    help: 'HTTP requests being answered',
    registers: [registry],
    collect() {
      this.set(inflight);
    },
  });
  new Gauge({
    name: `${prefix}websocket_connections`,
    help: 'Open WebSocket connections',
    registers: [registry],
    collect() {
      this.set(app?.connections ?? 0);
    },
  });
  const before = new Set(registry.getMetricsAsArray().map((m) => m.name));
  if (options.defaultMetrics ?? true) {
    if (registry.getSingleMetric(`${prefix}process_cpu_seconds_total`) === undefined) collectDefaultMetrics({ register: registry, prefix });
  }
  // Scrapes answer for the whole cluster once the app links this to its worker (the setup below).
  const defaults = new Set(
    registry
      .getMetricsAsArray()
      .map((m) => m.name)
      .filter((name) => !before.has(name)),
  );
  const clusterSeries = new ClusterSeries(registry, prefix, defaults, clusterTimeout);
  const finish = (req: Request, res: Response, start: number): void => {
    inflight--;
    series.record(req.route, req.method, res.statusCode, (performance.now() - start) / 1000);
  };

  const mw = (req: Request, res: Response, next: () => Promise<void>): Promise<void> | undefined => {
    if (req.path === path && (req.method === 'GET' || req.method === 'HEAD')) {
      app = req.app;
      return (clusterSeries.linked ? clusterSeries.scrape(req.app.logger) : registry.metrics()).then((text) => {
        res.header('content-type', registry.contentType).header('cache-control', 'no-store').end(text);
      });
    }
    const start = performance.now();
    inflight++;
    const chain = next();
    // Synchronous answer: recorded now, no closure. Otherwise when the chain settles (the
    // handler's promise, streams it awaited included).
    if (res.finished) {
      finish(req, res, start);
      return chain;
    }
    return chain.then(() => finish(req, res, start));
  };
  // At start (core/middleware-setup.ts): the app's WebSocket counters, and in a cluster the link
  // through which a scrape of any worker answers for all of them.
  defineMiddleware(mw, (api) => {
    app = api.app;
    wsStats = api.websocketCounters();
    const cluster = api.clusterMetrics(() => clusterSeries.collect());
    if (cluster !== undefined) clusterSeries.attach(cluster.worker, cluster.workers, cluster.gather);
  });
  return Object.assign(mw as Middleware, { registry });
}
