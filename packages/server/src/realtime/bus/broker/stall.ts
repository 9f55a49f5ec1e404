// A broker that stops answering without closing its connection (frozen by SIGSTOP, a long
// fork or save, a saturated host) leaves the connection up: nothing fails, publishes just
// wait for their confirmation. This watch notices it: publishes in flight and none confirmed
// for `timeout` ms make the bus not ready (`/readyz` 503) until the broker answers again.
// Checked on a timer, so a publish costs nothing more: a stall is noticed between `timeout`
// and `timeout` plus one tick (at most 1 s) after the last confirmation. It needs traffic to
// notice anything; the presence announcements (every `presenceInterval`) are some.

/** What the watch reads from the outbox on each tick. */
export interface StallProbe {
  /** Publishes sent and not confirmed. */
  readonly inFlight: number;
  /** Confirmations (or losses) so far: any change is progress. */
  readonly settles: number;
}

export class StallWatch {
  /** True from the tick that noticed the stall until the next confirmation. */
  stalled = false;
  private readonly timeout: number;
  private readonly probe: StallProbe;
  private readonly change: (stalled: boolean, ms: number) => void;
  /** When the last progress was seen (or nothing was in flight). */
  private progressAt = Date.now();
  private seen = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(timeout: number, probe: StallProbe, change: (stalled: boolean, ms: number) => void) {
    this.timeout = timeout;
    this.probe = probe;
    this.change = change;
  }

  start(): void {
    this.timer = setInterval(this.tick, Math.min(1000, Math.ceil(this.timeout / 4)));
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** The broker answered, or the connection changed (a new one starts with a clean slate). */
  progress(): void {
    const now = Date.now();
    if (this.stalled) {
      this.stalled = false;
      this.change(false, now - this.progressAt);
    }
    this.progressAt = now;
    this.seen = this.probe.settles;
  }

  private readonly tick = (): void => {
    const { inFlight, settles } = this.probe;
    if (inFlight === 0 || settles !== this.seen) return this.progress();
    const waited = Date.now() - this.progressAt;
    if (!this.stalled && waited >= this.timeout) {
      this.stalled = true;
      this.change(true, waited);
    }
  };
}
