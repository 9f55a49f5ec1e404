// One worker's numbers (or the process's, outside a cluster). Everything here is counted only
// while the collector is active: a dashboard page is open on this worker, or another worker
// asked for a snapshot in the last few seconds. Inactive, the request middleware and the close
// hook return after one boolean check, and no timer runs. Counts are cumulative since the
// collector was made: readers (view.ts) turn them into rates by difference, so several pages
// on several workers can read the same counters.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import type { App, Request, Response, Socket, TopicStats, WebSocketCounters } from '@tachyon/server';
import { BOUNDS, bucketOf } from './latency.ts';

/** A remote reader keeps this worker active this long after its last snapshot (ms). */
const REMOTE_KEEPALIVE = 5000;
/** Other methods are tallied as OTHER: a client must not be able to mint rows. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** Topics and sockets listed per worker, most subscribed first / oldest first. */
export const LIST_LIMIT = 50;

export interface RouteTally {
  count: number;
  /** 5xx answers. */
  errors: number;
  buckets: number[];
}

export interface WorkerSnapshot {
  worker: number;
  /** Date.now() when taken. */
  at: number;
  /** This thread's CPU time, µs (user + system), cumulative. */
  cpu: number;
  heapUsed: number;
  /** Resident memory of the whole process (shared by the workers of a cluster). */
  rss: number;
  /** Event-loop delay since the previous snapshot, ms. */
  eld: { p50: number; p99: number; max: number };
  connections: number;
  inflight: number;
  busReady: boolean;
  draining: boolean;
  ws: { in: number; out: number; publishes: number; dropped: number; volatileDropped: number; slowClosed: number };
  /** Socket closes by code, cumulative. */
  closes: Record<string, number>;
  /** `METHOD route` → tally. */
  routes: Record<string, RouteTally>;
  /** Topics subscribed in this worker (first LIST_LIMIT by subscribers), with presence and history. */
  topics: TopicStats[];
  topicCount: number;
  /** Open sockets (first LIST_LIMIT), only with `actions`: what the page may disconnect. */
  sockets: { id: number; ip: string; topics: number; dashboard: boolean }[];
}

export class Collector {
  private local = 0;
  private remoteUntil = 0;
  private activeNow = false;
  /** Route pattern → method → tally: two lookups per request, no key string built. */
  private readonly routes = new Map<string, Map<string, RouteTally>>();
  /** The same tallies by `METHOD route`, for snapshots. */
  private readonly tallies = new Map<string, RouteTally>();
  private readonly closes: Record<string, number> = {};
  private eld: ReturnType<typeof monitorEventLoopDelay> | null = null;
  ws: WebSocketCounters | null = null;
  private readonly app: App;
  /** The dashboard's own path: its requests are not counted. */
  private readonly own: string;
  private readonly listSockets: boolean;
  /** The dashboard's own page sockets on this worker (listed, marked, never offered for disconnect). */
  readonly pages = new Set<Socket<any>>();

  constructor(app: App, own: string, listSockets: boolean) {
    this.app = app;
    this.own = own;
    this.listSockets = listSockets;
  }

  /** Read on every request and close: one field. */
  get active(): boolean {
    return this.activeNow;
  }

  pageOpened(ws: Socket<any>): void {
    this.pages.add(ws);
    this.local++;
    this.update();
  }

  pageClosed(ws: Socket<any>): void {
    if (!this.pages.delete(ws)) return;
    this.local--;
    this.update();
  }

  private update(): void {
    const active = this.local > 0 || Date.now() < this.remoteUntil;
    if (active === this.activeNow) return;
    this.activeNow = active;
    if (active) {
      this.eld = monitorEventLoopDelay({ resolution: 10 });
      this.eld.enable();
    } else {
      this.eld?.disable();
      this.eld = null;
    }
  }

  /** Another worker read this one: stay active a while, and stop by itself when nobody asks. */
  touchedRemotely(): void {
    this.remoteUntil = Date.now() + REMOTE_KEEPALIVE;
    this.update();
    setTimeout(() => this.update(), REMOTE_KEEPALIVE + 10).unref();
  }

  /** The dashboard's middleware: times every request but the dashboard's own, while active. */
  readonly middleware = (req: Request, res: Response, next: () => Promise<void>): Promise<void> | undefined => {
    if (!this.activeNow || req.path.startsWith(this.own)) return next();
    const start = performance.now();
    const chain = next();
    if (res.finished) {
      this.record(req, res, start);
      return chain;
    }
    return chain.then(() => this.record(req, res, start));
  };

  private record(req: Request, res: Response, start: number): void {
    let byMethod = this.routes.get(req.route);
    if (byMethod === undefined) this.routes.set(req.route, (byMethod = new Map()));
    const method = METHODS.has(req.method) ? req.method : 'OTHER';
    let t = byMethod.get(method);
    if (t === undefined) {
      t = { count: 0, errors: 0, buckets: new Array(BOUNDS.length + 1).fill(0) };
      byMethod.set(method, t);
      this.tallies.set(`${method} ${req.route}`, t);
    }
    t.count++;
    if (res.statusCode >= 500) t.errors++;
    t.buckets[bucketOf(performance.now() - start)]!++;
  }

  /** The app's onSocketClose hook. */
  readonly socketClosed = (_ws: unknown, code: number): void => {
    if (this.activeNow) this.closes[code] = (this.closes[code] ?? 0) + 1;
  };

  async snapshot(): Promise<WorkerSnapshot> {
    const app = this.app;
    const cpu = process.threadCpuUsage();
    const eld = this.eld;
    const ms = (ns: number) => (Number.isFinite(ns) ? ns / 1e6 : 0);
    const eldNow =
      eld === null ? { p50: 0, p99: 0, max: 0 } : { p50: ms(eld.percentile(50)), p99: ms(eld.percentile(99)), max: ms(eld.max) };
    eld?.reset();
    // Topics: uWS counts a topic's subscribers but cannot list topics, so the sockets are walked.
    const counts = new Map<string, number>();
    const sockets: WorkerSnapshot['sockets'] = [];
    for (const s of app.sockets()) {
      const topics = s.topics;
      for (const t of topics) counts.set(t, (counts.get(t) ?? 0) + 1);
      if (this.listSockets && sockets.length < LIST_LIMIT)
        sockets.push({ id: s.id, ip: s.ip, topics: topics.length, dashboard: this.pages.has(s) });
    }
    const top = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, LIST_LIMIT);
    const topics = await Promise.all(top.map(([t]) => app.topicStats(t)));
    const w = this.ws;
    return {
      worker: app.worker,
      at: Date.now(),
      cpu: cpu.user + cpu.system,
      heapUsed: getHeapStatistics().used_heap_size,
      rss: process.memoryUsage.rss(),
      eld: eldNow,
      connections: app.connections,
      inflight: app.inflight,
      busReady: app.busReady,
      draining: app.draining,
      ws: {
        in: w?.messagesIn ?? 0,
        out: w?.messagesOut ?? 0,
        publishes: w?.publishes ?? 0,
        dropped: w?.dropped ?? 0,
        volatileDropped: w?.volatileDropped ?? 0,
        slowClosed: w?.slowClosed ?? 0,
      },
      closes: { ...this.closes },
      routes: Object.fromEntries(this.tallies),
      topics,
      topicCount: counts.size,
      sockets,
    };
  }
}
