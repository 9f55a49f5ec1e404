// HTTP rate limiting (docs/rate-limit.md): a fixed window of `max` requests per key (the
// client address by default). Every answer carries RateLimit-Limit/-Remaining/-Reset (IETF
// draft names); past the limit, 429 with Retry-After. Options are checked once; per request:
// the key, one store increment, the header writes. An async key function or store costs one
// closure per request.
import { HttpError } from '../../http/errors.ts';
import type { Request } from '../../http/io/request.ts';
import type { Response } from '../../http/io/response.ts';
import { isPromise } from '../../http/send-value.ts';
import type { Middleware, Next } from '../../http/types.ts';
import { MemoryRateLimitStore, type RateLimitHit, type RateLimitStore } from '../../core/rate-limit-store.ts';
import { checkKnownKeys } from '../../core/options-check.ts';

export { MemoryRateLimitStore, type RateLimitHit, type RateLimitStore } from '../../core/rate-limit-store.ts';

export interface RateLimitOptions {
  /** Window length in milliseconds. */
  window: number;
  /** Requests allowed per key and window; the next one gets 429. */
  max: number;
  /** The key to count by. Default: `req.ip` (mind the app's trustProxy behind a proxy). */
  key?: (req: Request) => string | Promise<string>;
  /** Default: a new MemoryRateLimitStore (this process only). */
  store?: RateLimitStore;
  /** Send RateLimit-Limit/-Remaining/-Reset on every answer. Default true. */
  headers?: boolean;
  /** When the store fails: 'allow' (default: let the request through, log) or 'deny' (503). */
  onStoreError?: 'allow' | 'deny';
}

interface Limiter {
  windowMs: number;
  max: number;
  headers: boolean;
  deny: boolean;
  lastErrorLog: number;
}

const KNOWN = new Set(['window', 'max', 'key', 'store', 'headers', 'onStoreError']);
const ERROR_LOG_INTERVAL = 10_000;

/** `app.use('/api', rateLimit({ window: 60_000, max: 100 }))`. */
export function rateLimit(options: RateLimitOptions): Middleware {
  if (typeof options !== 'object' || options === null) throw new TypeError('rateLimit(): options { window, max } are required');
  checkKnownKeys('rateLimit()', options, KNOWN);
  const { window: windowMs, max } = options;
  if (!Number.isInteger(windowMs) || windowMs < 1) throw new TypeError('rateLimit(): window must be a positive integer (milliseconds)');
  if (!Number.isInteger(max) || max < 1) throw new TypeError('rateLimit(): max must be a positive integer');
  if (options.key !== undefined && typeof options.key !== 'function')
    throw new TypeError('rateLimit(): key must be a function (req) => string');
  const store = options.store ?? new MemoryRateLimitStore();
  if (typeof store !== 'object' || store === null || typeof store.increment !== 'function' || typeof store.reset !== 'function') {
    throw new TypeError('rateLimit(): store must implement increment(key, windowMs) and reset(key)');
  }
  if (options.headers !== undefined && typeof options.headers !== 'boolean') throw new TypeError('rateLimit(): headers must be a boolean');
  const onStoreError = options.onStoreError ?? 'allow';
  if (onStoreError !== 'allow' && onStoreError !== 'deny') throw new TypeError("rateLimit(): onStoreError must be 'allow' or 'deny'");
  const keyOf = options.key;
  const l: Limiter = { windowMs, max, headers: options.headers ?? true, deny: onStoreError === 'deny', lastErrorLog: 0 };

  const count = (key: unknown, req: Request, res: Response, next: Next): Promise<void> | undefined => {
    if (typeof key !== 'string') throw new TypeError(`rateLimit(): key function returned ${typeof key}, expected a string`);
    let hit: RateLimitHit | Promise<RateLimitHit>;
    try {
      hit = store.increment(key, windowMs);
    } catch (err) {
      return storeFailed(l, err, req, next);
    }
    if (isPromise(hit)) {
      return Promise.resolve(hit).then(
        (h) => decide(l, h, res, next),
        (err) => storeFailed(l, err, req, next),
      );
    }
    return decide(l, hit, res, next);
  };

  return (req, res, next) => {
    const key = keyOf === undefined ? req.ip : keyOf(req);
    if (isPromise(key)) return Promise.resolve(key).then((k) => count(k, req, res, next));
    return count(key, req, res, next);
  };
}

function decide(l: Limiter, hit: RateLimitHit, res: Response, next: Next): Promise<void> | undefined {
  if (typeof hit?.count !== 'number' || typeof hit.resetAt !== 'number')
    throw new TypeError('rateLimit(): store.increment() must return { count, resetAt }');
  const reset = Math.max(0, Math.ceil((hit.resetAt - Date.now()) / 1000));
  if (l.headers) {
    // Common names (known valid) and numbers (nothing to check): header() costs a lookup each.
    res.header('ratelimit-limit', l.max);
    res.header('ratelimit-remaining', hit.count >= l.max ? 0 : l.max - hit.count);
    res.header('ratelimit-reset', reset);
  }
  if (hit.count > l.max) throw new HttpError(429, 'Too Many Requests', { headers: { 'retry-after': String(Math.max(1, reset)) } });
  return next();
}

/**
 * The store failed (a Redis outage, say). Default: fail open — a limiter outage should not
 * take the whole API down with it; the error is logged (at most every 10 s). 'deny': 503.
 */
function storeFailed(l: Limiter, err: unknown, req: Request, next: Next): Promise<void> {
  const now = Date.now();
  if (now - l.lastErrorLog >= ERROR_LOG_INTERVAL) {
    l.lastErrorLog = now;
    req.app.logger.error({ err }, l.deny ? 'rate limit store failed: request refused (503)' : 'rate limit store failed: request allowed');
  }
  if (l.deny) throw new HttpError(503, 'Rate limiter unavailable', { cause: err, expose: true });
  return next();
}
