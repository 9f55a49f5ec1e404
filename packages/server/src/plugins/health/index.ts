// Liveness and readiness endpoints (docs/health.md). `GET /healthz` answers 200 while the
// process can serve at all; `GET /readyz` answers 503 once close() has started (so a load
// balancer stops sending traffic while in-flight requests drain), while the app's bus says it
// is disconnected (`Bus.ready()`), or while a registered check fails. Every other request
// passes through: one path comparison.
import type { Request } from '../../http/io/request.ts';
import type { Response } from '../../http/io/response.ts';
import type { Middleware } from '../../http/types.ts';
import { checkKnownKeys } from '../../core/options-check.ts';
import { prepareHeaders } from '../../http/io/prepared-headers.ts';

/** A readiness check: true when ready. Throwing, rejecting or timing out counts as not ready. */
export type HealthCheck = () => boolean | Promise<boolean>;

export interface HealthOptions {
  /** Named readiness checks, e.g. `{ db: () => pool.ready, bus: () => bus.connected }`. */
  checks?: Record<string, HealthCheck>;
  /** Default `/healthz`. */
  livenessPath?: string;
  /** Default `/readyz`. */
  readinessPath?: string;
  /** Milliseconds a check may take before it counts as failed. Default 5000. */
  timeout?: number;
}

const KNOWN = new Set(['checks', 'livenessPath', 'readinessPath', 'timeout']);
const LIVE = '{"status":"ok"}';
const DRAINING = '{"status":"draining"}';
const BUS_DOWN = '{"status":"unavailable","failed":["bus"],"checks":{"bus":"failed"}}';
const HEADERS = prepareHeaders({ 'cache-control': 'no-store', 'content-type': 'application/json; charset=utf-8' });

/** `app.use(health({ checks: { db: () => db.ping() } }))` — add it first, before auth or rate limits. */
export function health(options: HealthOptions = {}): Middleware {
  if (typeof options !== 'object' || options === null) throw new TypeError('health(): options must be an object');
  checkKnownKeys('health()', options, KNOWN);
  const live = checkPath('livenessPath', options.livenessPath ?? '/healthz');
  const ready = checkPath('readinessPath', options.readinessPath ?? '/readyz');
  if (live === ready) throw new TypeError('health(): livenessPath and readinessPath must differ');
  const timeout = options.timeout ?? 5000;
  if (!Number.isInteger(timeout) || timeout < 1) throw new TypeError('health(): timeout must be a positive integer (milliseconds)');
  const checks = options.checks ?? {};
  if (typeof checks !== 'object' || checks === null) throw new TypeError('health(): checks must be an object of functions');
  const names = Object.keys(checks);
  for (const name of names)
    if (typeof checks[name] !== 'function')
      throw new TypeError(`health(): check "${name}" must be a function returning a boolean (or a promise of one)`);
  const fns = names.map((n) => checks[n]!);

  return (req, res, next) => {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return next();
    const path = req.path;
    if (path === live) return answer(res, 200, LIVE);
    if (path !== ready) return next();
    if (req.app.draining) return answer(res, 503, DRAINING);
    // A disconnected bus (Redis, NATS down): publishes would reach only this process.
    if (!req.app.busReady) return answer(res, 503, BUS_DOWN);
    if (fns.length === 0) return answer(res, 200, LIVE);
    return runChecks(names, fns, timeout, req).then((failed) => {
      if (res.finished) return;
      if (req.app.draining) return answer(res, 503, DRAINING);
      if (!req.app.busReady) return answer(res, 503, BUS_DOWN);
      if (failed.length === 0) answer(res, 200, JSON.stringify({ status: 'ok', checks: Object.fromEntries(names.map((n) => [n, 'ok'])) }));
      else
        answer(
          res,
          503,
          JSON.stringify({
            status: 'unavailable',
            failed,
            checks: Object.fromEntries(names.map((n) => [n, failed.includes(n) ? 'failed' : 'ok'])),
          }),
        );
    });
  };
}

function answer(res: Response, status: number, body: string): undefined {
  res.status(status).setHeaders(HEADERS).end(body);
  return undefined;
}

/** Runs every check at once; resolves with the names of those that failed. Never rejects. */
async function runChecks(names: string[], fns: HealthCheck[], timeout: number, req: Request): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeout)));
  try {
    const results = await Promise.all(
      fns.map(async (fn, i) => {
        try {
          return (await Promise.race([fn(), expired])) === true;
        } catch (err) {
          req.app.logger.warn({ err, check: names[i] }, 'readiness check failed');
          return false;
        }
      }),
    );
    return names.filter((_, i) => !results[i]);
  } finally {
    clearTimeout(timer);
  }
}

function checkPath(option: string, path: unknown): string {
  if (typeof path !== 'string' || !path.startsWith('/') || /[?#\s]/.test(path))
    throw new TypeError(`health(): ${option} must be a path starting with "/"`);
  return path;
}
