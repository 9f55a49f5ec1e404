// Which cluster worker this thread is, if any. Set by the worker side of cluster() before it
// runs the factory, read by the App's constructor: an App built in a worker takes the
// worker's thread bus and tags its log lines with the worker's id. Imports nothing from
// app/ so that app.ts can depend on it without a cycle.
import type { Bus } from '../realtime/bus/index.ts';
import type { HistoryStore } from '../realtime/history/store.ts';
import type { ClusterRequests } from './requests.ts';

export interface WorkerContext {
  /** 1..workers; stays the same across restarts of that worker. */
  readonly id: number;
  readonly workers: number;
  /**
   * The cluster's memory history store (kept by the primary), the default of history topics;
   * undefined when the primary relays to a broker (cluster({ bus })): servers elsewhere could
   * not share it, so history topics then need a store they all share (redisHistory).
   */
  readonly history: HistoryStore | undefined;
  /**
   * The bus for an App built in this worker: the first one gets the thread bus (composed with
   * its own bus, if it has one); later ones keep their own.
   */
  claimBus(app: object, own: Bus | undefined): Bus | undefined;
  /** Worker-to-worker requests, for the App that owns the cluster's bus (after claimBus); undefined for others. */
  requests(app: object): ClusterRequests | undefined;
  /** Messages this worker sent to and received from the others; static files it loaded itself or took from another worker. */
  stats(): { readonly sent: number; readonly received: number; readonly relayed: number; readonly staticMade: number; readonly staticShared: number };
  /**
   * For the App that owns the cluster's bus (else undefined): `collect` is what this worker
   * answers when another one is scraped; the returned function asks every other worker.
   */
  linkMetrics(app: object, collect: () => Promise<unknown[]>): ((timeout: number) => Promise<{ parts: unknown[][]; missing: number[] }>) | undefined;
}

/** What metrics() hands the App under CLUSTER_METRICS, to be linked to the cluster when the App starts in a worker. @internal */
export interface ClusterMetricsLink {
  /** This worker's metrics, as JSON for the scraping worker. */
  collect(): Promise<unknown[]>;
  /** Called once, by an App starting in a cluster worker. */
  attach(app: object, worker: number, workers: number, gather: (timeout: number) => Promise<{ parts: unknown[][]; missing: number[] }>): void;
}

/** @internal */
export const CLUSTER_METRICS: unique symbol = Symbol('tachyon.clusterMetrics');

/** The cluster link a middleware carries, if any. */
export function clusterMetricsOf(handler: unknown): ClusterMetricsLink | undefined {
  const link = (handler as { [CLUSTER_METRICS]?: ClusterMetricsLink } | null)?.[CLUSTER_METRICS];
  return typeof link?.attach === 'function' ? link : undefined;
}

let current: WorkerContext | undefined;

/** The cluster worker running in this thread, or undefined (no cluster, or the primary). */
export function clusterWorker(): WorkerContext | undefined {
  return current;
}

/** @internal */
export function enterWorker(context: WorkerContext): void {
  current = context;
}
