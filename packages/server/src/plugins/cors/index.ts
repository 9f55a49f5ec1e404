// CORS (docs/cors.md): answers preflights itself (204, never reaching the handler) and
// adds the Access-Control-* headers to actual requests. Everything that does not depend on
// the request is computed once in options.ts; per request, only the origin decision and the
// header writes remain, through the public API (req.header, res.header, res.vary). An async
// origin function costs one closure per request; nothing else allocates.
import type { Request } from '../../http/io/request.ts';
import type { Response } from '../../http/io/response.ts';
import type { Middleware, Next } from '../../http/types.ts';
import { isPromise } from '../../http/send-value.ts';
import { resolveCorsOptions, type CorsOptions, type CorsPolicy } from './options.ts';

export type { CorsOptions, CorsOrigin } from './options.ts';

/** `app.use(cors({ origin: ['https://app.example.com'], credentials: true }))`. */
export function cors(options: CorsOptions = {}): Middleware {
  const policy = resolveCorsOptions(options);
  return (req, res, next) => {
    const origin = req.header('origin');
    const preflight = origin !== undefined && req.method === 'OPTIONS' && req.header('access-control-request-method') !== undefined;
    if (policy.kind === 'fixed') return apply(policy, policy.fixed, preflight, req, res, next);
    // The answer depends on Origin even when it is absent: a cache must not hand a response
    // without Access-Control-Allow-Origin to an allowed origin.
    res.vary('origin');
    if (origin === undefined) return next();
    if (policy.kind === 'list') return apply(policy, policy.list.has(origin) ? origin : null, preflight, req, res, next);
    if (policy.kind === 'regexp') return apply(policy, policy.regexp!.test(origin) ? origin : null, preflight, req, res, next);
    const decision = policy.fn!(origin, req);
    if (isPromise(decision))
      return Promise.resolve(decision).then((d) => apply(policy, allowedBy(d, origin, policy), preflight, req, res, next));
    return apply(policy, allowedBy(decision, origin, policy), preflight, req, res, next);
  };
}

/** A function's answer → the Allow-Origin value, or null. `*` with credentials becomes the origin itself. */
function allowedBy(decision: unknown, origin: string, policy: CorsPolicy): string | null {
  if (decision === true) return origin;
  if (typeof decision === 'string' && decision !== '') return decision === '*' && policy.credentials ? origin : decision;
  return null;
}

function apply(
  policy: CorsPolicy,
  allowOrigin: string | null,
  preflight: boolean,
  req: Request,
  res: Response,
  next: Next,
): Promise<void> | undefined {
  if (allowOrigin !== null) {
    res.header('access-control-allow-origin', allowOrigin);
    if (policy.credentials) res.header('access-control-allow-credentials', 'true');
  }
  if (!preflight) {
    if (allowOrigin !== null && policy.exposeHeaders !== null) res.header('access-control-expose-headers', policy.exposeHeaders);
    return next();
  }
  // A preflight is answered here, allowed or not (without Allow-* headers the browser fails it).
  if (allowOrigin !== null) {
    if (policy.methods !== '') res.header('access-control-allow-methods', policy.methods);
    if (policy.headers !== null) {
      if (policy.headers !== '') res.header('access-control-allow-headers', policy.headers);
    } else {
      res.vary('access-control-request-headers');
      const asked = req.header('access-control-request-headers');
      if (asked !== undefined) res.header('access-control-allow-headers', asked);
    }
    if (policy.maxAge !== null) res.header('access-control-max-age', policy.maxAge);
  }
  res.status(204).end();
  return undefined;
}
