// WebSocket rate limits (docs/rate-limit.md, "WebSockets"), declared per route with
// `app.ws(path, { rateLimit: { … } })`:
//  - upgrades per client address in a fixed window, refused with 429 + Retry-After before the
//    handshake (through a RateLimitStore, so a shared store can count across servers);
//  - messages per socket per second: past it, protocol frames get the `RATE_LIMITED` error
//    reply and raw messages are dropped; a socket that keeps going (`closeAfter` refused
//    messages without a quiet second in between) is closed with 4430.
// Subscriptions per socket are `maxSubscriptions` (behavior.ts). Nothing here runs for a
// route without `rateLimit`.
import { HttpError } from '../http/errors.ts';
import type { Request } from '../http/io/request.ts';
import { isPromise } from '../http/send-value.ts';
import { MemoryRateLimitStore, type RateLimitHit, type RateLimitStore } from '../core/rate-limit-store.ts';
import type { Logger } from '../core/logger.ts';
import { checkKnownKeys } from '../core/options-check.ts';
import { warnBadInput } from '../core/throttled-log.ts';

export interface WsRateLimit {
  /** Handshakes per client address (or `key`) in a fixed window; past `max`, 429 with Retry-After. */
  upgrades?: {
    /** Window length in milliseconds. */
    window: number;
    /** Upgrades allowed per key and window. */
    max: number;
    /** What to count by. Default: `req.ip` (mind trustProxy). */
    key?: (req: Request) => string;
    /** Default: a MemoryRateLimitStore (this process only). The same interface as rateLimit()'s. */
    store?: RateLimitStore;
  };
  /** Client messages per socket per second (events, subscribes, pings and raw messages alike). */
  messagesPerSecond?: number;
  /**
   * Refused messages after which the socket is closed with 4430; the count restarts after a
   * second with nothing refused. Default 50; 0 never closes.
   */
  closeAfter?: number;
}

/** Per-socket message counting (fixed one-second windows). */
export interface MessageBudget {
  windowStart: number;
  count: number;
  refused: number;
  refusedThisWindow: boolean;
}

export interface CompiledWsRateLimit {
  upgrades: UpgradeLimiter | null;
  messagesPerSecond: number;
  closeAfter: number;
}

const KNOWN = Object.keys({ upgrades: true, messagesPerSecond: true, closeAfter: true } satisfies Record<keyof WsRateLimit, true>);
const UPGRADE_KNOWN = Object.keys({ window: true, max: true, key: true, store: true } satisfies Record<
  keyof NonNullable<WsRateLimit['upgrades']>,
  true
>);

/** Checks the option when the route is declared; null when absent. */
export function checkWsRateLimit(path: string, option: WsRateLimit | undefined): CompiledWsRateLimit | null {
  if (option === undefined) return null;
  const fail = (msg: string): never => {
    throw new TypeError(`ws ${path}: rateLimit${msg}`);
  };
  if (typeof option !== 'object' || option === null) fail(' must be an object { upgrades, messagesPerSecond, closeAfter }');
  checkKnownKeys(`ws ${path}: rateLimit`, option, KNOWN);
  const perSecond = option.messagesPerSecond ?? 0;
  if (option.messagesPerSecond !== undefined && !(Number.isInteger(perSecond) && perSecond >= 1))
    fail('.messagesPerSecond must be a positive integer');
  const closeAfter = option.closeAfter ?? 50;
  if (!(Number.isInteger(closeAfter) && closeAfter >= 0)) fail('.closeAfter must be a non-negative integer');
  let upgrades: UpgradeLimiter | null = null;
  const u = option.upgrades;
  if (u !== undefined) {
    if (typeof u !== 'object' || u === null) fail('.upgrades must be an object { window, max }');
    checkKnownKeys(`ws ${path}: rateLimit.upgrades`, u, UPGRADE_KNOWN);
    if (!Number.isInteger(u.window) || u.window < 1) fail('.upgrades.window must be a positive integer (milliseconds)');
    if (!Number.isInteger(u.max) || u.max < 1) fail('.upgrades.max must be a positive integer');
    if (u.key !== undefined && typeof u.key !== 'function') fail('.upgrades.key must be a function (req) => string');
    const store = u.store ?? new MemoryRateLimitStore();
    if (typeof store !== 'object' || store === null || typeof store.increment !== 'function')
      fail('.upgrades.store must implement increment(key, windowMs) and reset(key)');
    upgrades = new UpgradeLimiter(u.window, u.max, u.key, store);
  }
  if (upgrades === null && perSecond === 0) fail(' needs upgrades or messagesPerSecond');
  return { upgrades, messagesPerSecond: perSecond, closeAfter };
}

const ERROR_LOG_INTERVAL = 10_000;

/** Counts handshakes; throws HttpError(429) past the limit. A failing store lets upgrades through (logged). */
export class UpgradeLimiter {
  private readonly windowMs: number;
  private readonly max: number;
  private readonly key: ((req: Request) => string) | undefined;
  private readonly store: RateLimitStore;
  private lastErrorLog = 0;

  constructor(windowMs: number, max: number, key: ((req: Request) => string) | undefined, store: RateLimitStore) {
    this.windowMs = windowMs;
    this.max = max;
    this.key = key;
    this.store = store;
  }

  /** Counts this upgrade: undefined when allowed now, a promise when the store is async; throws 429 past the limit. */
  check(req: Request, log: Logger): void | Promise<void> {
    const key = this.key === undefined ? req.ip : this.key(req);
    if (typeof key !== 'string') throw new TypeError(`ws rateLimit.upgrades.key returned ${typeof key}, expected a string`);
    let hit: RateLimitHit | Promise<RateLimitHit>;
    try {
      hit = this.store.increment(key, this.windowMs);
    } catch (err) {
      return this.storeFailed(err, log);
    }
    if (isPromise(hit))
      return Promise.resolve(hit).then(
        (h) => this.decide(h, key, log),
        (err) => this.storeFailed(err, log),
      );
    this.decide(hit, key, log);
  }

  private decide(hit: RateLimitHit, key: string, log: Logger): void {
    if (hit.count <= this.max) return;
    const retry = Math.max(1, Math.ceil((hit.resetAt - Date.now()) / 1000));
    if (hit.count === this.max + 1)
      warnBadInput(log, { key, max: this.max, window: this.windowMs }, 'websocket upgrades over the rate limit: refusing with 429');
    throw new HttpError(429, 'Too Many Requests', { headers: { 'retry-after': String(retry) } });
  }

  private storeFailed(err: unknown, log: Logger): void {
    const now = Date.now();
    if (now - this.lastErrorLog >= ERROR_LOG_INTERVAL) {
      this.lastErrorLog = now;
      log.error({ err }, 'websocket upgrade rate limit store failed: upgrade allowed');
    }
  }
}

/**
 * Counts one message against the socket's budget. True: let it through. False: refused
 * (reply or drop); `budget.refused` tells the caller when to close.
 */
export function admitMessage(budget: MessageBudget, perSecond: number, now: number): boolean {
  if (now - budget.windowStart >= 1000) {
    // A second with nothing refused forgives: the window that just ended, or a silent one
    // between it and now.
    if (!budget.refusedThisWindow || now - budget.windowStart >= 2000) budget.refused = 0;
    budget.windowStart = now;
    budget.count = 0;
    budget.refusedThisWindow = false;
  }
  if (++budget.count <= perSecond) return true;
  budget.refused++;
  budget.refusedThisWindow = true;
  return false;
}

export function newBudget(now: number): MessageBudget {
  return { windowStart: now, count: 0, refused: 0, refusedThisWindow: false };
}
