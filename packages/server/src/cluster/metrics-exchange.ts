// Cluster-wide metrics (docs/metrics.md, "In a cluster"): a scrape lands on one worker, which
// asks the primary for every other worker's prom-client metrics as JSON; the primary asks each
// ready worker, waits up to the scraping worker's timeout, and answers with the parts it got
// and the ids of the workers that did not answer (stuck, restarting, or without metrics()), so
// one stuck worker delays a scrape by at most the timeout and never hangs it. Internal to
// src/cluster/: the primary side is MetricsExchange, the worker side WorkerMetrics.

/** One registry's getMetricsAsJSON(), reduced to what structured clone can carry. */
export type MetricsJson = unknown[];

export type MetricsRequest =
  /** A worker is being scraped: collect the others. */
  | { type: 'metrics-ask'; ref: number; timeout: number }
  /** A worker's answer to metrics-collect (null: it has no metrics() linked). */
  | { type: 'metrics'; ref: number; metrics: MetricsJson | null };

export type MetricsReply =
  | { type: 'metrics-collect'; ref: number }
  | { type: 'metrics-gathered'; ref: number; parts: MetricsJson[]; missing: number[] };

/** What a scraping worker gets back: the other workers' metrics and who did not answer. */
export interface Gathered {
  readonly parts: MetricsJson[];
  readonly missing: number[];
}

interface Gathering {
  readonly from: number;
  readonly ref: number;
  readonly waiting: Set<number>;
  readonly parts: MetricsJson[];
  readonly answered: Set<number>;
  timer: NodeJS.Timeout | undefined;
}

/** The primary side. */
export class MetricsExchange {
  private next = 1;
  private readonly open = new Map<number, Gathering>();
  private readonly tell: (worker: number, message: MetricsReply) => void;
  private readonly ready: () => number[];
  private readonly workers: number;

  /** `tell` posts to a live worker (a no-op for a gone one); `ready` lists the workers serving now. */
  constructor(workers: number, tell: (worker: number, message: MetricsReply) => void, ready: () => number[]) {
    this.workers = workers;
    this.tell = tell;
    this.ready = ready;
  }

  handle(worker: number, message: MetricsRequest): void {
    if (message.type === 'metrics-ask') this.ask(worker, message.ref, message.timeout);
    else this.answer(worker, message.ref, message.metrics);
  }

  private ask(from: number, ref: number, timeout: number): void {
    const key = this.next++;
    const others = this.ready().filter((id) => id !== from);
    const g: Gathering = { from, ref, waiting: new Set(others), parts: [], answered: new Set(), timer: undefined };
    this.open.set(key, g);
    if (others.length === 0) return this.finish(key);
    g.timer = setTimeout(() => this.finish(key), Math.max(0, Math.min(timeout, 60_000)));
    g.timer.unref();
    for (const id of others) this.tell(id, { type: 'metrics-collect', ref: key });
  }

  private answer(worker: number, key: number, metrics: MetricsJson | null): void {
    const g = this.open.get(key);
    if (g === undefined || !g.waiting.delete(worker)) return; // too late: that scrape was answered without it
    if (Array.isArray(metrics)) {
      g.parts.push(metrics);
      g.answered.add(worker);
    }
    if (g.waiting.size === 0) this.finish(key);
  }

  private finish(key: number): void {
    const g = this.open.get(key);
    if (g === undefined) return;
    this.open.delete(key);
    clearTimeout(g.timer);
    const missing: number[] = [];
    for (let id = 1; id <= this.workers; id++) if (id !== g.from && !g.answered.has(id)) missing.push(id);
    this.tell(g.from, { type: 'metrics-gathered', ref: g.ref, parts: g.parts, missing });
  }

  /**
   * A worker left: scrapes it asked for are dropped (its replacement must not get their
   * answers: its refs start over), and scrapes waiting for it stop waiting.
   */
  forget(worker: number): void {
    for (const [key, g] of [...this.open]) {
      if (g.from === worker) {
        this.open.delete(key);
        clearTimeout(g.timer);
      } else if (g.waiting.delete(worker) && g.waiting.size === 0) this.finish(key);
    }
  }

  /** The cluster is closing: pending scrapes are answered with what arrived. */
  close(): void {
    for (const key of [...this.open.keys()]) this.finish(key);
  }
}

/** The worker side: answers the primary's collects and asks it when this worker is scraped. */
export class WorkerMetrics {
  private nextRef = 1;
  private readonly pending = new Map<number, { resolve: (g: Gathered) => void; timer: NodeJS.Timeout }>();
  private source: (() => Promise<MetricsJson>) | undefined;
  private readonly post: (message: MetricsRequest) => void;
  private readonly id: number;
  private readonly workers: number;

  constructor(id: number, workers: number, post: (message: MetricsRequest) => void) {
    this.id = id;
    this.workers = workers;
    this.post = post;
  }

  /** What this worker answers when another one is scraped. */
  provide(source: () => Promise<MetricsJson>): void {
    this.source = source;
  }

  /** The other workers' metrics; resolves within `timeout` (plus a margin should the primary not answer). */
  gather(timeout: number): Promise<Gathered> {
    const ref = this.nextRef++;
    return new Promise<Gathered>((resolve) => {
      // The primary bounds the wait itself; this guards against a primary that never answers.
      const timer = setTimeout(() => {
        this.pending.delete(ref);
        const missing: number[] = [];
        for (let id = 1; id <= this.workers; id++) if (id !== this.id) missing.push(id);
        resolve({ parts: [], missing });
      }, timeout + 1000);
      timer.unref();
      this.pending.set(ref, { resolve, timer });
      this.post({ type: 'metrics-ask', ref, timeout });
    });
  }

  handle(message: MetricsReply): void {
    if (message.type === 'metrics-gathered') {
      const p = this.pending.get(message.ref);
      if (p === undefined) return;
      this.pending.delete(message.ref);
      clearTimeout(p.timer);
      p.resolve({ parts: message.parts, missing: message.missing });
      return;
    }
    const { ref } = message;
    if (this.source === undefined) return this.post({ type: 'metrics', ref, metrics: null });
    this.source().then(
      (metrics) => this.post({ type: 'metrics', ref, metrics }),
      () => this.post({ type: 'metrics', ref, metrics: null }),
    );
  }
}
