// Requests that outlived their uWS callback: for the request timeout and graceful shutdown.
// One coarse interval sweeps deadlines instead of a timer per request.
import type { Response } from './io/response.ts';
import type { Tracker } from './route-context.ts';
import { expireIfDue, shutDown } from './io/exchange.ts';

const SWEEP_MS = 250;

export class InflightTracker implements Tracker {
  private readonly pending = new Set<Response>();
  private timer: NodeJS.Timeout | null = null;
  private idle: (() => void)[] = [];

  get size(): number {
    return this.pending.size;
  }

  track(res: Response): void {
    this.pending.add(res);
    if (this.timer === null) {
      this.timer = setInterval(() => this.sweep(), SWEEP_MS);
      this.timer.unref();
    }
  }

  settled(res: Response): void {
    if (!this.pending.delete(res) || this.pending.size > 0) return;
    // The sweep timer stays until a sweep finds nothing pending: under load the set empties
    // and refills constantly, and a timer per transition showed up in profiles.
    if (this.idle.length === 0) return;
    const idle = this.idle;
    this.idle = [];
    for (const wake of idle) wake();
  }

  private sweep(): void {
    if (this.pending.size === 0) {
      clearInterval(this.timer!);
      this.timer = null;
      return;
    }
    const now = Date.now();
    for (const res of this.pending) expireIfDue(res, now);
  }

  /** Resolves when no request is in flight. */
  whenIdle(): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** Shutdown started: streamed responses (SSE, res.stream()) are ended, their signals aborted. */
  endStreams(): void {
    for (const res of [...this.pending]) shutDown(res);
  }

  /** Forced shutdown: every remaining response is dropped. */
  destroyAll(): void {
    for (const res of [...this.pending]) res.destroy();
  }
}
