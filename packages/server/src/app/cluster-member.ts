// What cluster() hands the App of a worker (app.joinCluster(), docs/cluster.md, "The App's
// side of a cluster"): the worker's place in the cluster and its links to the other workers.
// The App depends on this interface only; src/cluster/ implements it, so the dependency points
// from cluster/ to app/, never back. cluster() runs the factory through withClusterMember(),
// so the first App the factory builds joins from its constructor: app.worker and app.cluster
// are right inside the factory (code reads them there), and nothing is a thread-wide global.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Rpc } from '../core/rpc.ts';
import type { MetricsGather } from '../core/middleware-setup.ts';
import type { Bus } from '../realtime/bus/index.ts';
import type { HistoryStore } from '../realtime/history/store.ts';
import type { SharedKeys } from '../realtime/once.ts';

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
  /** Idempotency keys kept by the primary for every worker (retried requests run once in the cluster). */
  readonly keys?: SharedKeys;
  /** Connects the App's request endpoint (app.cluster.request/handle) to the other workers. */
  connect(requests: Rpc): void;
  /**
   * app.cluster.drain(): asks the primary to drain worker `worker` (close it, WebSockets with
   * 1012, and start a fresh one); resolves once the fresh one serves. Absent: this member cannot.
   */
  drain?(worker: number): Promise<void>;
  /** metrics(): `collect` is what this worker answers when another one is scraped; returns how to ask the others. */
  linkMetrics(collect: () => Promise<unknown[]>): MetricsGather;
}

/** The member an App built inside withClusterMember() joins; `claimed` once the first one did. */
const joining = new AsyncLocalStorage<{ readonly member: ClusterMember; claimed: boolean }>();

/**
 * Runs `factory` so that the first App it constructs (synchronously or after an await) joins
 * `member` from its constructor. Advanced: cluster() does it in each worker.
 */
export function withClusterMember<T>(member: ClusterMember, factory: () => T): T {
  return joining.run({ member, claimed: false }, factory);
}

/** For the App's constructor: the member to join, to the first App only. */
export function claimClusterMember(): ClusterMember | undefined {
  const pending = joining.getStore();
  if (pending === undefined || pending.claimed) return undefined;
  pending.claimed = true;
  return pending.member;
}
