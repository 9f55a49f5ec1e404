// What a route is, as readers of the route table see it (app.routes(), onRoute, OpenAPI
// generators), and which middleware applies to it: plain data made from a declared route and
// its full path.
import { pathInPrefix, prefixApplies, type Pattern } from '../core/path.ts';
import type { RouteRecord } from './route-record.ts';
import type { BodyKind, Handler, HttpMethod, Middleware, ResponseSchemas, RouteDocs, RouteOptions } from '../http/types.ts';
import type { Request } from '../http/io/request.ts';
import type { Response } from '../http/io/response.ts';
import type { Schema } from '../http/validation.ts';

export interface ScopedMiddleware {
  prefix: string | null; // absolute; null = unconditional within its router
  handlers: Middleware[];
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
  /** Reply schemas by status, as declared (`response`); empty when none. */
  readonly response: ResponseSchemas;
  /** The route's documentation fields (summary, description, tags, deprecated, operationId, security, hide). */
  readonly docs: RouteDocs;
}

/** One WebSocket route as declared. */
export interface WsRouteInfo {
  readonly kind: 'ws';
  readonly path: string;
  /**
   * Its events: the data schema (`schema`) and the reply schema (`reply`) each declares, its
   * binary frame's code (`binary`) when it has one, and `binaryReply: true` when its binary
   * frames are answered in bytes (`binary: { code, encode }`).
   */
  readonly events: readonly {
    readonly name: string;
    readonly schema?: Schema;
    readonly reply?: Schema;
    readonly binary?: number;
    readonly binaryReply?: true;
  }[];
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

/** A route's description: `middleware` counts the app and router middleware that run before it. */
export function describeHttpRoute(record: RouteRecord, pattern: Pattern, middleware: number): HttpRouteInfo {
  const o = record.options;
  const schemas: Record<string, Schema> = {};
  for (const key of ['params', 'query', 'body', 'headers', 'cookies'] as const) if (o[key] !== undefined) schemas[key] = o[key]!;
  return Object.freeze({
    kind: 'http' as const,
    method: record.method ?? 'ANY',
    path: pattern.path,
    params: Object.freeze([...pattern.paramNames]),
    schemas: Object.freeze(schemas),
    consumes: Object.freeze([...(o.consumes ?? ['json'])]),
    ...(o.bodyLimit !== undefined && { bodyLimit: o.bodyLimit }),
    ...(o.timeout !== undefined && { timeout: o.timeout }),
    ...(o.dedup !== undefined && { dedup: o.dedup }),
    middleware,
    response: Object.freeze({ ...o.response }),
    docs: Object.freeze(pickDocs(o)),
  });
}

const DOC_KEYS = ['summary', 'description', 'tags', 'deprecated', 'operationId', 'security', 'hide'] as const;

function pickDocs(o: RouteOptions): RouteDocs {
  const docs: Record<string, unknown> = {};
  for (const key of DOC_KEYS) if (o[key] !== undefined) docs[key] = o[key];
  return docs as RouteDocs;
}
