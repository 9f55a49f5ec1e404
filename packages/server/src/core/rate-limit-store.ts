// Where rate-limit counts live. The interface is small so a shared store (Redis, for limits
// across servers) can implement it; the default keeps counts in this process's memory.

/** A key's count in its current window, and when that window ends (epoch ms). */
export interface RateLimitHit {
  count: number;
  resetAt: number;
}

export interface RateLimitStore {
  /** Counts one hit for `key` in a fixed window of `windowMs` starting at the key's first hit. */
  increment(key: string, windowMs: number): RateLimitHit | Promise<RateLimitHit>;
  /** Forgets `key` (e.g. after a successful login). */
  reset(key: string): void | Promise<void>;
}

/**
 * Fixed windows in memory. Memory stays bounded by the keys seen in the last two windows:
 * every window the map of recent keys becomes the "previous" map and the old previous one is
 * dropped whole, so expired keys go without a scan (a key hit again is moved back to current).
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private current = new Map<string, RateLimitHit>();
  private previous = new Map<string, RateLimitHit>();
  private timer: NodeJS.Timeout | null = null;
  private period = 0;

  /** Keys held (current and previous window). */
  get size(): number {
    return this.current.size + this.previous.size;
  }

  increment(key: string, windowMs: number): RateLimitHit {
    const now = Date.now();
    let hit = this.current.get(key);
    if (hit === undefined) {
      hit = this.previous.get(key);
      if (hit !== undefined) {
        this.previous.delete(key);
        this.current.set(key, hit);
      }
    }
    if (hit === undefined || hit.resetAt <= now) {
      hit = { count: 0, resetAt: now + windowMs };
      this.current.set(key, hit);
    }
    hit.count++;
    if (this.timer === null || windowMs > this.period) this.startRotation(windowMs);
    return hit;
  }

  reset(key: string): void {
    this.current.delete(key);
    this.previous.delete(key);
  }

  /** Stops the rotation timer and forgets every key. */
  clear(): void {
    this.current.clear();
    this.previous.clear();
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  // One rotation per window (the longest seen): a key created after one rotation has
  // expired by the next-but-one, when its map is dropped.
  private startRotation(windowMs: number): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.period = Math.max(this.period, windowMs);
    this.timer = setInterval(() => this.rotate(), this.period);
    this.timer.unref();
  }

  private rotate(): void {
    this.previous = this.current;
    this.current = new Map();
    if (this.previous.size === 0 && this.timer !== null) {
      clearInterval(this.timer); // idle: no wake-ups until the next hit
      this.timer = null;
    }
  }
}
