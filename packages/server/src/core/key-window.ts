// The idempotency keys of one route, remembered for a window (docs/realtime.md, "Retried
// requests, run once"): a Map in arrival order, so the expired keys are always at its front and
// memory is bounded (at most `keys` entries, the oldest forgotten first). One process keeps one
// per route (realtime/once.ts); in a cluster() the primary keeps one per route for every
// worker (cluster/once-exchange.ts).

export interface KeyLimits {
  /** Milliseconds a key is remembered after its first frame arrived. */
  window: number;
  /** Most keys remembered. */
  keys: number;
}

export class KeyWindow<E extends { at: number }> {
  private readonly entries = new Map<string, E>();
  private readonly limits: KeyLimits;
  /** Whether a key's handler has settled: one still running is never forgotten by time. */
  private readonly settled: (e: E) => boolean;

  constructor(limits: KeyLimits, settled: (e: E) => boolean) {
    this.limits = limits;
    this.settled = settled;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The key's entry at `now`, or undefined when it is new or its window has passed. */
  find(key: string, now: number): E | undefined {
    // Expired keys go, oldest first; one still running stops the sweep (the bound on keys still holds).
    for (const [k, e] of this.entries) {
      if (!this.settled(e) || now - e.at < this.limits.window) break;
      this.entries.delete(k);
    }
    const e = this.entries.get(key);
    // Past the window but not swept yet (a handler still running is ahead of it): a new key.
    if (e === undefined || !this.settled(e) || now - e.at < this.limits.window) return e;
    this.entries.delete(key);
    return undefined;
  }

  /** The key's entry as it is, expired or not. */
  get(key: string): E | undefined {
    return this.entries.get(key);
  }

  /** Remembers a new key, forgetting the oldest when full. */
  add(key: string, e: E): void {
    this.entries.delete(key);
    if (this.entries.size >= this.limits.keys) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, e);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  [Symbol.iterator](): IterableIterator<[string, E]> {
    return this.entries.entries();
  }
}
