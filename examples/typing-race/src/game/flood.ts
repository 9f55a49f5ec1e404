// A token bucket: `rate` tokens a second, at most `burst` saved up. One per player, checked
// before every keystroke or backspace event, so a client that floods is refused
// (RATE_LIMITED) without the room's state changing.

export class TokenBucket {
  #tokens: number;
  #last: number;
  readonly #rate: number;
  readonly #burst: number;

  constructor(rate: number, burst: number, now: number) {
    this.#rate = rate / 1000;
    this.#burst = burst;
    this.#tokens = burst;
    this.#last = now;
  }

  /** Takes one token; false when the bucket is empty. `now` in ms. */
  take(now: number): boolean {
    const elapsed = now - this.#last;
    if (elapsed > 0) {
      this.#tokens = Math.min(this.#burst, this.#tokens + elapsed * this.#rate);
      this.#last = now;
    }
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
