// How metrics() (plugins/metrics) takes part in a cluster without knowing cluster/: the
// middleware carries a ClusterMetricsLink under CLUSTER_METRICS; an App that joined a cluster
// (app.joinCluster) finds it when it starts and links it to the other workers. Here, below
// both, so that plugins/ and app/ share it and neither imports cluster/.

/** One registry's metrics as JSON, and the other workers' gathered for a scrape. */
export type MetricsGather = (timeout: number) => Promise<{ parts: unknown[][]; missing: number[] }>;

/** What metrics() hands the App under CLUSTER_METRICS, to be linked when the App starts in a worker. @internal */
export interface ClusterMetricsLink {
  /** This worker's metrics, as JSON for the scraping worker. */
  collect(): Promise<unknown[]>;
  /** Called once, by an App starting in a cluster worker. */
  attach(app: object, worker: number, workers: number, gather: MetricsGather): void;
}

/** @internal */
export const CLUSTER_METRICS: unique symbol = Symbol('tachyon.clusterMetrics');

/** The cluster link a middleware carries, if any. */
export function clusterMetricsOf(handler: unknown): ClusterMetricsLink | undefined {
  const link = (handler as { [CLUSTER_METRICS]?: ClusterMetricsLink } | null)?.[CLUSTER_METRICS];
  return typeof link?.attach === 'function' ? link : undefined;
}
