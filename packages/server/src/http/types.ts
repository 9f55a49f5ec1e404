import type { Infer, Schema } from './validation.ts';
import type { PathParams } from '../core/path.ts';
import type { QueryRecord } from './io/query.ts';
import type { Request } from './io/request.ts';
import type { Response } from './io/response.ts';
import type { CompressionOptions } from './compression.ts';
import type { RouteHooks } from './hooks.ts';

export type { Get, RouteTypes } from './route-types.ts';

/** Resolves when everything after this middleware has run. Never rejects: errors go to the error handler. */
export type Next = (err?: unknown) => Promise<void>;

/** A handler or middleware. `Res` is a route's own view of the response (TypedResponse, with `response` schemas). */
export type Handler<R = Request, Res = Response> = (req: R, res: Res, next: Next) => unknown;
export type Middleware = Handler<Request>;
export type ErrorHandler = (err: any, req: Request, res: Response) => unknown;
export type NotFoundHandler = (req: Request, res: Response) => unknown;

export type BodyKind = 'json' | 'urlencoded' | 'multipart' | 'text';

export interface RouteOptions {
  params?: Schema;
  query?: Schema;
  body?: Schema;
  headers?: Schema;
  cookies?: Schema;
  /** Largest accepted request body in bytes (413 past it). Defaults to the app's bodyLimit. */
  bodyLimit?: number;
  /** Content types a `body` schema accepts (415 otherwise). Default: ['json']. */
  consumes?: BodyKind[];
  /** Milliseconds before an unanswered request gets 503; 0 disables. Defaults to the app's. */
  timeout?: number;
  /** Compress responses of this route (overrides the app's `compression`). */
  compress?: boolean | CompressionOptions;
  /** Share one handler run between concurrent identical anonymous GET/HEAD requests. See docs/serving.md. */
  dedup?: boolean;
  /** This route's own lifecycle hooks, run after the app's and its scopes' (docs/hooks.md): `{ preHandler: [auth] }`. */
  hooks?: RouteHooks;
  /**
   * What the route replies, by status: `{ 200: User, 404: NotFound }`; a status class
   * (`'2XX'`) or `'default'` covers the rest. Documents the reply (OpenAPI, typed clients).
   */
  response?: ResponseSchemas;
  /**
   * How res.json() writes replies: 'json' (JSON.stringify, the default) or 'compiled' (the
   * `response` schemas compiled by fast-json-stringify; undeclared properties are left out).
   * See docs/response.md, "Compiled serialization".
   */
  serialize?: 'json' | 'compiled';
  /** One line on what the route does (OpenAPI `summary`). */
  summary?: string;
  /** What the route does, in Markdown (OpenAPI `description`). */
  description?: string;
  /** Groups the route with others in the documents (OpenAPI `tags`). */
  tags?: readonly string[];
  /** Marks the route as deprecated in the documents. */
  deprecated?: boolean;
  /** A stable, unique name for the operation (OpenAPI `operationId`); generated clients name methods after it. */
  operationId?: string;
  /** Security requirements, each naming schemes declared once in the document: `[{ apiKey: [] }]`. */
  security?: readonly Readonly<Record<string, readonly string[]>>[];
  /** Leaves the route out of generated documents. */
  hide?: boolean;
}

/** A status code, a status class, or 'default'. */
export type ResponseStatus = number | '1XX' | '2XX' | '3XX' | '4XX' | '5XX' | 'default';
/** Reply schemas by status (RouteOptions.response). */
export type ResponseSchemas = { readonly [S in ResponseStatus]?: Schema };

/** The documentation fields of a route's options, as the route table gives them. */
export type RouteDocs = Pick<RouteOptions, 'summary' | 'description' | 'tags' | 'deprecated' | 'operationId' | 'security' | 'hide'>;

type Out<O, K extends keyof RouteOptions, D> = O extends { [P in K]: infer S } ? (S extends Schema ? Infer<S> : D) : D;

/** The Request type a route's handlers see, from its path and options. */
export type RequestFor<Path extends string, O> = Request<{
  params: Out<O, 'params', PathParams<Path>>;
  query: Out<O, 'query', QueryRecord>;
  body: Out<O, 'body', undefined>;
  headers: Out<O, 'headers', Record<string, string>>;
  cookies: Out<O, 'cookies', Record<string, string>>;
}>;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';
