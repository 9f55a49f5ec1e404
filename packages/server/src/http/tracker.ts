// Requests that outlived their uWS callback: for the request timeout and graceful shutdown.
// One coarse interval sweeps deadlines instead of a timer per request.
//
// The responses are kept in a plain list, each response holding its own index (exchange.ts:
// inflightAt): tracking is a store, settling a swap with the last entry. A Set cost about 300
// instructions per async request (the object's identity hash, the hash table's add, delete and
// shrink; bench/instructions.mjs on the realistic POST). The list only grows, to the highest
// number of requests in flight at once, and its free tail holds undefined (no response is kept
// alive by it), so neither push nor pop resizes it under a load that empties and refills it.
import type { Response } from './io/response.ts';
import type { Tracker } from './route-context.ts';
import { expireIfDue, inflightAt, setInflightAt, shutDown } from './io/exchange.ts';

const SWEEP_MS = 250;

export class InflightTracker implements Tracker {
  private readonly pending: (Response | undefined)[] = [];
  private count = 0;
  private timer: NodeJS.Timeout | null = null;
  private idle: (() => void)[] = [];

  get size(): number {
    return this.count;
  }

  track(res: Response): void {
    if (inflightAt(res) !== -1) return;
    setInflightAt(res, this.count);
    this.pending[this.count++] = res;
    if (this.timer === null) {
      this.timer = setInterval(() => this.sweep(), SWEEP_MS);
      this.timer.unref();
    }
  }

  settled(res: Response): void {
    const at = inflightAt(res);
    if (at === -1) return;
    setInflightAt(res, -1);
    const pending = this.pending;
    const last = --this.count;
    if (at !== last) {
      const moved = pending[last]!;
      pending[at] = moved;
      setInflightAt(moved, at);
    }
    pending[last] = undefined;
    if (last > 0) return;
    // The sweep timer stays until a sweep finds nothing pending: under load the list empties
    // and refills constantly, and a timer per transition showed up in profiles.
    if (this.idle.length === 0) return;
    const idle = this.idle;
    this.idle = [];
    for (const wake of idle) wake();
  }

  /** The responses in flight now, copied: settling one while walking them reorders the list. */
  private inFlight(): Response[] {
    return this.pending.slice(0, this.count) as Response[];
  }

  private sweep(): void {
    if (this.count === 0) {
      clearInterval(this.timer!);
      this.timer = null;
      return;
    }
    const now = Date.now();
    for (const res of this.inFlight()) expireIfDue(res, now);
  }

  /** Resolves when no request is in flight. */
  whenIdle(): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** Shutdown started: streamed responses (SSE, res.stream()) are ended, their signals aborted. */
  endStreams(): void {
    for (const res of this.inFlight()) shutDown(res);
  }

  /** Forced shutdown: every remaining response is dropped. */
  destroyAll(): void {
    for (const res of this.inFlight()) res.destroy();
  }
}
