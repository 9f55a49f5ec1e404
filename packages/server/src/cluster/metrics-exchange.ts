// Cluster-wide metrics (docs/metrics.md, "In a cluster"): a scrape lands on one worker, which
// asks the primary for every other worker's prom-client metrics as JSON; the primary asks each
// ready worker, waits up to the scraping worker's timeout, and answers with the parts it got
// and the ids of the workers that did not answer (stuck, restarting, or without metrics()), so
// one stuck worker delays a scrape by at most the timeout and never hangs it. All of it is
// requests between the primary and its workers (core/rpc.ts). Internal to src/cluster/.
import type { Rpc } from '../core/rpc.ts';

/** One registry's getMetricsAsJSON(), reduced to what structured clone can carry. */
export type MetricsJson = unknown[];

/** What a scraping worker gets back: the other workers' metrics and who did not answer. */
export interface Gathered {
  readonly parts: MetricsJson[];
  readonly missing: number[];
}

/** Every worker but `self`: the answer when nobody could be asked in time. */
function allMissing(self: number, workers: number): Gathered {
  const missing: number[] = [];
  for (let id = 1; id <= workers; id++) if (id !== self) missing.push(id);
  return { parts: [], missing };
}

/**
 * The primary side: worker `from` is scraped. Asks each of `others` (the ready workers, each
 * through its own Rpc) for its metrics, up to `timeout` ms, or until `closing` settles.
 */
export async function gatherMetrics(
  from: number,
  workers: number,
  others: { id: number; rpc: Rpc }[],
  timeout: number,
  closing: Promise<void>,
): Promise<Gathered> {
  const wait = Math.max(1, Math.min(timeout, 60_000));
  const answered = new Map<number, MetricsJson>();
  const asks = others.map(({ id, rpc }) =>
    rpc.request(id, 'metrics-collect', undefined, { timeout: wait, unref: true }).then(
      (metrics) => void (Array.isArray(metrics) && answered.set(id, metrics)),
      () => {}, // stuck, gone or failing: counted missing
    ),
  );
  await Promise.race([Promise.all(asks), closing]);
  const { missing } = allMissing(from, workers);
  return { parts: [...answered.values()], missing: missing.filter((id) => !answered.has(id)) };
}

/** The worker side: answers the primary's collects, and asks it when this worker is scraped. */
export class WorkerMetrics {
  private source: (() => Promise<MetricsJson>) | undefined;
  private readonly primary: Rpc;
  private readonly id: number;
  private readonly workers: number;

  constructor(id: number, workers: number, primary: Rpc) {
    this.id = id;
    this.workers = workers;
    this.primary = primary;
    // null: this worker has no metrics() linked, or collecting failed.
    primary.handle('metrics-collect', () => (this.source === undefined ? null : this.source().catch(() => null)));
  }

  /** What this worker answers when another one is scraped. */
  provide(source: () => Promise<MetricsJson>): void {
    this.source = source;
  }

  /** The other workers' metrics; resolves within `timeout` (plus a margin should the primary not answer). */
  gather(timeout: number): Promise<Gathered> {
    // The primary bounds the wait itself; the margin guards against a primary that never answers.
    return this.primary.request(0, 'metrics-gather', timeout, { timeout: timeout + 1000, unref: true }).then(
      (g) => g as Gathered,
      () => allMissing(this.id, this.workers),
    );
  }
}
