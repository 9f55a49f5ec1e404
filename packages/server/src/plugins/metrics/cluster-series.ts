// metrics() in a cluster (docs/metrics.md, "In a cluster"): each worker thread has its own
// registry; a scrape lands on one worker, which gathers the others' getMetricsAsJSON() through
// the primary and merges them with prom-client's AggregatorRegistry.aggregate, each metric by
// its `aggregator` (Tachyon's counters, histograms and gauges: sum). prom-client's default
// metrics are the exception: in worker threads several of them describe the whole process
// (CPU, resident memory, open file descriptors), so summing them would count the process once
// per worker; they keep a `worker` label instead, one series per worker.
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { Logger } from '../../core/logger.ts';

type Gather = (timeout: number) => Promise<{ parts: unknown[][]; missing: number[] }>;

interface PlainMetric {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  values: { labels: Record<string, string | number>; value: number; metricName?: string }[];
}

export class ClusterSeries {
  private readonly registry: Registry;
  private readonly prefix: string;
  /** Names of prom-client's default metrics in `registry`: labelled per worker. */
  private readonly perWorker: ReadonlySet<string>;
  private readonly timeout: number;
  private worker = 0;
  private workers = 0;
  private gather: Gather | undefined;

  constructor(registry: Registry, prefix: string, perWorker: ReadonlySet<string>, timeout: number) {
    this.registry = registry;
    this.prefix = prefix;
    this.perWorker = perWorker;
    this.timeout = timeout;
  }

  /** Set by the App when it starts in a cluster worker; until then scrapes are local. */
  attach(worker: number, workers: number, gather: Gather): void {
    this.worker = worker;
    this.workers = workers;
    this.gather = gather;
  }

  get linked(): boolean {
    return this.gather !== undefined;
  }

  /** This worker's metrics, cloneable (no functions), default metrics labelled with the worker. */
  async collect(): Promise<PlainMetric[]> {
    const worker = String(this.worker);
    const out: PlainMetric[] = [];
    for (const m of (await this.registry.getMetricsAsJSON()) as unknown as PlainMetric[]) {
      const own = this.perWorker.has(m.name);
      out.push({
        name: m.name,
        help: m.help,
        type: String(m.type),
        aggregator: own ? 'sum' : (m.aggregator ?? 'sum'),
        values: own ? m.values.map((v) => ({ ...v, labels: { ...v.labels, worker } })) : m.values,
      });
    }
    return out;
  }

  /** The whole cluster in Prometheus text format. */
  async scrape(logger: Logger): Promise<string> {
    const [own, gathered] = await Promise.all([this.collect(), this.gather!(this.timeout)]);
    if (gathered.missing.length > 0) {
      logger.warn(
        { missing: gathered.missing, timeout: this.timeout },
        'metrics: workers did not answer the scrape in time; their numbers are left out',
      );
    }
    const cluster: PlainMetric[] = [
      {
        name: `${this.prefix}cluster_workers`,
        help: 'Worker threads in the cluster',
        type: 'gauge',
        aggregator: 'first',
        values: [{ labels: {}, value: this.workers }],
      },
      {
        name: `${this.prefix}cluster_metrics_workers_missing`,
        help: 'Workers whose metrics are missing from this scrape (did not answer in time, restarting, or without metrics())',
        type: 'gauge',
        aggregator: 'first',
        values: [{ labels: {}, value: gathered.missing.length }],
      },
    ];
    const merged = AggregatorRegistry.aggregate([own, ...(gathered.parts as PlainMetric[][]), cluster]);
    merged.setContentType(this.registry.contentType); // the response says the registry's type (OpenMetrics or not)
    return merged.metrics();
  }
}
