// What a page is sent once a second: the workers' snapshots (collector.ts) turned into rates
// by difference with the previous ones, routes and topics merged over the workers. One Reader
// per worker that has pages open; it keeps the last snapshot of each worker.
import { quantile } from './latency.ts';
import type { RouteTally, WorkerSnapshot } from './collector.ts';

export interface RouteView {
  route: string;
  /** Requests per second over the last interval. */
  rps: number;
  errors: number;
  p50: number;
  p90: number;
  p99: number;
}

export interface WorkerView {
  worker: number;
  /** CPU of this thread, % of one core. */
  cpu: number;
  heapUsed: number;
  rss: number;
  eld: WorkerSnapshot['eld'];
  connections: number;
  inflight: number;
  busReady: boolean;
  draining: boolean;
}

export interface DashboardView {
  at: number;
  /** Worker count in a cluster, 0 outside one. */
  workers: number;
  /** Workers that did not answer this time. */
  missing: number[];
  connections: number;
  rps: number;
  routes: RouteView[];
  ws: { inPerSec: number; outPerSec: number; publishesPerSec: number; dropped: number; volatileDropped: number; slowClosed: number };
  closes: Record<string, number>;
  topics: { topic: string; subscribers: number; presence: number | null; history: number | null }[];
  topicCount: number;
  workerStats: WorkerView[];
  sockets: { worker: number; id: number; ip: string; topics: number; dashboard: boolean }[];
  actions: boolean;
}

export class Reader {
  private readonly previous = new Map<number, WorkerSnapshot>();

  private readonly actions: boolean;

  constructor(actions: boolean) {
    this.actions = actions;
  }

  view(snapshots: WorkerSnapshot[], workers: number, missing: number[]): DashboardView {
    const routes = new Map<string, { count: number; errors: number; buckets: number[]; seconds: number }>();
    const topics = new Map<string, DashboardView['topics'][number]>();
    const closes: Record<string, number> = {};
    const ws = { inPerSec: 0, outPerSec: 0, publishesPerSec: 0, dropped: 0, volatileDropped: 0, slowClosed: 0 };
    const workerStats: WorkerView[] = [];
    const sockets: DashboardView['sockets'] = [];
    let connections = 0;
    let topicCount = 0;
    for (const s of snapshots) {
      const prev = this.previous.get(s.worker);
      const seconds = prev === undefined ? 0 : Math.max((s.at - prev.at) / 1000, 0.001);
      const rate = (now: number, before: number | undefined) => (seconds === 0 ? 0 : Math.max(now - (before ?? 0), 0) / seconds);
      connections += s.connections;
      topicCount += s.topicCount;
      workerStats.push({
        worker: s.worker,
        cpu: rate(s.cpu, prev?.cpu) / 1e4, // µs per second → % of one core
        heapUsed: s.heapUsed,
        rss: s.rss,
        eld: s.eld,
        connections: s.connections,
        inflight: s.inflight,
        busReady: s.busReady,
        draining: s.draining,
      });
      ws.inPerSec += rate(s.ws.in, prev?.ws.in);
      ws.outPerSec += rate(s.ws.out, prev?.ws.out);
      ws.publishesPerSec += rate(s.ws.publishes, prev?.ws.publishes);
      ws.dropped += s.ws.dropped;
      ws.volatileDropped += s.ws.volatileDropped;
      ws.slowClosed += s.ws.slowClosed;
      for (const [code, n] of Object.entries(s.closes)) closes[code] = (closes[code] ?? 0) + n;
      if (prev !== undefined) for (const [route, t] of Object.entries(s.routes)) addRoute(routes, route, t, prev.routes[route], seconds);
      for (const t of s.topics) {
        const seen = topics.get(t.topic);
        // Subscribers are per worker: summed. Presence and a shared history are the same everywhere.
        if (seen === undefined) topics.set(t.topic, { ...t });
        else {
          seen.subscribers += t.subscribers;
          seen.presence = t.presence === null ? seen.presence : Math.max(seen.presence ?? 0, t.presence);
          seen.history = t.history === null ? seen.history : Math.max(seen.history ?? 0, t.history);
        }
      }
      for (const sock of s.sockets) sockets.push({ worker: s.worker, ...sock });
      this.previous.set(s.worker, copy(s));
    }
    const routeViews: RouteView[] = [...routes.entries()].map(([route, r]) => ({
      route,
      rps: r.count / r.seconds,
      errors: r.errors,
      p50: quantile(r.buckets, 0.5),
      p90: quantile(r.buckets, 0.9),
      p99: quantile(r.buckets, 0.99),
    }));
    routeViews.sort((a, b) => b.rps - a.rps || a.route.localeCompare(b.route));
    return {
      at: Date.now(),
      workers,
      missing,
      connections,
      rps: routeViews.reduce((sum, r) => sum + r.rps, 0),
      routes: routeViews,
      ws,
      closes,
      topics: [...topics.values()].sort((a, b) => b.subscribers - a.subscribers).slice(0, 50),
      topicCount,
      workerStats: workerStats.sort((a, b) => a.worker - b.worker),
      sockets,
      actions: this.actions,
    };
  }
}

/** Adds one worker's interval (now − before) of a route to the merged routes. */
function addRoute(
  routes: Map<string, { count: number; errors: number; buckets: number[]; seconds: number }>,
  route: string,
  now: RouteTally,
  before: RouteTally | undefined,
  seconds: number,
): void {
  const count = now.count - (before?.count ?? 0);
  if (count <= 0) return;
  let r = routes.get(route);
  if (r === undefined) routes.set(route, (r = { count: 0, errors: 0, buckets: new Array(now.buckets.length).fill(0), seconds }));
  r.count += count;
  r.errors += now.errors - (before?.errors ?? 0);
  for (let i = 0; i < now.buckets.length; i++) r.buckets[i]! += now.buckets[i]! - (before?.buckets[i] ?? 0);
}

/** A snapshot's counters as they are now (a local snapshot shares its tallies with the collector). */
function copy(s: WorkerSnapshot): WorkerSnapshot {
  const routes: Record<string, RouteTally> = {};
  for (const [k, t] of Object.entries(s.routes)) routes[k] = { count: t.count, errors: t.errors, buckets: [...t.buckets] };
  return { ...s, routes, topics: [], sockets: [] };
}
