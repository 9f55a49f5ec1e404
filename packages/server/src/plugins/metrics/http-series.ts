// Request counts and durations per (route, method, status), kept in plain numbers: per
// request a few Map lookups and additions, no allocation once a series exists. prom-client
// reads them only when Prometheus scrapes, through the two metric objects at the bottom
// (prom-client's own Counter/Histogram hash a label object on every observation).
import type { Metric, Registry } from 'prom-client';

export const DEFAULT_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Series {
  readonly labels: { method: string; route: string; status: string };
  count: number;
  sum: number;
  /** Per bucket, not cumulative; the last slot is +Inf. */
  readonly buckets: Float64Array;
}

/** Methods outside this set are labelled OTHER: a client must not be able to mint series. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export class HttpSeries {
  private readonly byRoute = new Map<string, Map<string, Map<number, Series>>>();
  private readonly all: Series[] = [];

  private readonly bounds: readonly number[];

  constructor(bounds: readonly number[]) {
    this.bounds = bounds;
  }

  record(route: string, anyMethod: string, status: number, seconds: number): void {
    const method = METHODS.has(anyMethod) ? anyMethod : 'OTHER';
    let byMethod = this.byRoute.get(route);
    if (byMethod === undefined) this.byRoute.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let s = byStatus.get(status);
    if (s === undefined) {
      s = { labels: { method, route, status: String(status) }, count: 0, sum: 0, buckets: new Float64Array(this.bounds.length + 1) };
      this.all.push(s);
      byStatus.set(status, s);
    }
    s.count++;
    s.sum += seconds;
    const b = this.bounds;
    let i = 0;
    while (i < b.length && seconds > b[i]!) i++;
    s.buckets[i]!++;
  }

  /** Registers `<prefix>http_requests_total` and `<prefix>http_request_duration_seconds` on `registry`. */
  register(registry: Registry, prefix: string): void {
    const series = this.all;
    const bounds = this.bounds;
    const total = {
      name: `${prefix}http_requests_total`,
      help: 'HTTP requests answered, by method, route pattern and status',
      type: 'counter',
      aggregator: 'sum',
      get: () => ({ ...total, values: series.map((s) => ({ labels: s.labels, value: s.count })) }),
      reset: () => this.reset(),
    };
    const duration = {
      name: `${prefix}http_request_duration_seconds`,
      help: 'HTTP request duration in seconds, from the first middleware to the end of the chain',
      type: 'histogram',
      aggregator: 'sum',
      get: () => {
        const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
        for (const s of series) {
          let cumulative = 0;
          for (let i = 0; i <= bounds.length; i++) {
            cumulative += s.buckets[i]!;
            values.push({
              labels: { le: i < bounds.length ? bounds[i]! : '+Inf', ...s.labels },
              value: cumulative,
              metricName: `${duration.name}_bucket`,
            });
          }
          values.push({ labels: s.labels, value: s.sum, metricName: `${duration.name}_sum` });
          values.push({ labels: s.labels, value: s.count, metricName: `${duration.name}_count` });
        }
        return { ...duration, values };
      },
      reset: () => this.reset(),
    };
    registry.registerMetric(total as unknown as Metric);
    registry.registerMetric(duration as unknown as Metric);
  }

  private reset(): void {
    for (const s of this.all) {
      s.count = 0;
      s.sum = 0;
      s.buckets.fill(0);
    }
  }
}
