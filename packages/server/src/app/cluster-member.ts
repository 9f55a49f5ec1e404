// What cluster() hands the App its factory returned (app.joinCluster(), docs/cluster.md, "The
// App's side of a cluster"): the worker's place in the cluster and its links to the other
// workers. The App depends on this interface only; src/cluster/ implements it, so the
// dependency points from cluster/ to app/, never back.
import type { Rpc } from '../core/rpc.ts';
import type { MetricsGather } from '../core/metrics-link.ts';
import type { Bus } from '../realtime/bus/index.ts';
import type { HistoryStore } from '../realtime/history/store.ts';

export interface ClusterMember {
  /** This worker's id, 1..workers; it stays the same across restarts of that worker. */
  readonly worker: number;
  readonly workers: number;
  /**
   * The App's bus in the cluster, given its own `bus` option: the worker's thread bus (composed
   * with the App's bus, if any). Throws when the cluster relays to a broker and the App has
   * a bus too.
   */
  bus(own: Bus | undefined): Bus;
  /**
   * The cluster's history store, the default of history topics when the App has no bus of its
   * own; undefined when the primary relays to a broker (servers elsewhere could not share it).
   */
  readonly history: HistoryStore | undefined;
  /** Connects the App's request endpoint (app.cluster.request/handle) to the other workers. */
  connect(requests: Rpc): void;
  /** metrics(): `collect` is what this worker answers when another one is scraped; returns how to ask the others. */
  linkMetrics(collect: () => Promise<unknown[]>): MetricsGather;
}
