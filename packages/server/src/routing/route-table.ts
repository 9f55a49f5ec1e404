// The route table: every declared route with its full path and the middleware and error
// handlers that apply to it, flattened once from the app and its routers. The app compiles
// it onto the uWS router; `app.routes()` exposes a read-only description of it (for docs,
// OpenAPI, tooling).
import { joinPaths, parsePattern, pathInPrefix, prefixApplies, type Pattern } from '../core/path.ts';
import { declarationsOf, type MiddlewareRecord, type RouteRecord, type Router } from './router.ts';
import type { BodyKind, ErrorHandler, Handler, HttpMethod, Middleware } from '../http/types.ts';
import type { Request } from '../http/io/request.ts';
import type { Response } from '../http/io/response.ts';
import type { Schema } from '../http/validation.ts';

export interface FlatRoute {
  record: RouteRecord;
  pattern: Pattern;
  middleware: Handler<any>[];
  errorHandlers: ErrorHandler[];
}

export interface ScopedMiddleware {
  prefix: string | null; // absolute; null = unconditional within its router
  handlers: Middleware[];
}

/** Every route of `root` and the routers attached to it, with full paths. */
export function flattenRoutes(root: Router): FlatRoute[] {
  const out: FlatRoute[] = [];
  flatten(root, '', [], [], out);
  return out;
}

function flatten(router: Router, prefix: string, inherited: ScopedMiddleware[], errors: ErrorHandler[], out: FlatRoute[]): void {
  const declared = declarationsOf(router);
  const scoped = [...inherited, ...declared.middleware.map((m: MiddlewareRecord) => ({ prefix: m.prefix === null ? null : joinPaths(prefix, m.prefix), handlers: m.handlers }))];
  const errorChain = declared.errorHandler ? [declared.errorHandler, ...errors] : errors;
  for (const record of declared.routes) {
    const pattern = parsePattern(joinPaths(prefix, record.path));
    out.push({ record, pattern, middleware: middlewareFor(pattern, scoped), errorHandlers: errorChain });
  }
  for (const child of declared.children) flatten(child.router, joinPaths(prefix, child.prefix), scoped, errorChain, out);
}

/** Middleware that applies to a route, with a runtime path check only where a :param overlaps the prefix. */
export function middlewareFor(pattern: Pattern, scoped: ScopedMiddleware[]): Handler<any>[] {
  const out: Handler<any>[] = [];
  for (const m of scoped) {
    const applies = m.prefix === null ? 'always' : prefixApplies(m.prefix, pattern);
    if (applies === 'never') continue;
    for (const h of m.handlers) {
      if (applies === 'always') out.push(h);
      else {
        const prefix = m.prefix!;
        out.push((req: Request<any>, res: Response, next) => (pathInPrefix(req.path, prefix) ? h(req, res, next) : next()));
      }
    }
  }
  return out;
}

/** One HTTP route as declared, for readers of the table (OpenAPI, docs, tests). */
export interface HttpRouteInfo {
  readonly kind: 'http';
  /** Upper-case method, or 'ANY'. */
  readonly method: HttpMethod | 'ANY';
  /** The full path pattern (`/users/:id`, `/static/*`). */
  readonly path: string;
  readonly params: readonly string[];
  readonly schemas: Readonly<{ params?: Schema; query?: Schema; body?: Schema; headers?: Schema; cookies?: Schema }>;
  /** Body kinds a body schema accepts. */
  readonly consumes: readonly BodyKind[];
  readonly bodyLimit?: number;
  readonly timeout?: number;
  readonly dedup?: boolean;
  /** Number of middleware that run before validation (app and routers). */
  readonly middleware: number;
}

/** One WebSocket route as declared. */
export interface WsRouteInfo {
  readonly kind: 'ws';
  readonly path: string;
  readonly events: readonly { readonly name: string; readonly schema?: Schema }[];
}

/** A web-standard fetch handler mounted under `prefix` (`app.mount`): every method, every path below. */
export interface MountInfo {
  readonly kind: 'mount';
  readonly prefix: string;
  readonly stripPrefix: boolean;
}

/** Files served from memory under `prefix` (`app.static`, or `app.client`'s one file): GET and HEAD. */
export interface StaticInfo {
  readonly kind: 'static';
  readonly prefix: string;
  readonly dir: string;
}

export type RouteInfo = HttpRouteInfo | WsRouteInfo | MountInfo | StaticInfo;

export function describeHttpRoute(r: FlatRoute): HttpRouteInfo {
  const o = r.record.options;
  const schemas: Record<string, Schema> = {};
  for (const key of ['params', 'query', 'body', 'headers', 'cookies'] as const) if (o[key] !== undefined) schemas[key] = o[key]!;
  return Object.freeze({
    kind: 'http' as const,
    method: r.record.method ?? 'ANY',
    path: r.pattern.path,
    params: Object.freeze([...r.pattern.paramNames]),
    schemas: Object.freeze(schemas),
    consumes: Object.freeze([...(o.consumes ?? ['json'])]),
    ...(o.bodyLimit !== undefined && { bodyLimit: o.bodyLimit }),
    ...(o.timeout !== undefined && { timeout: o.timeout }),
    ...(o.dedup !== undefined && { dedup: o.dedup }),
    middleware: r.middleware.length,
  });
}
