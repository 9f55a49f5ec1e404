// Routers only record what was declared. Nothing is matched here: at startup the app
// flattens every router into full paths and hands them to the uWS native router.
import { normalizePrefix, parsePattern } from '../core/path.ts';
import type { ErrorHandler, Handler, HttpMethod, Middleware, Next, RequestFor, ResponseSchemas, RouteOptions } from '../http/types.ts';
import type { ReplyHandler, TypedResponse } from '../http/reply-types.ts';
import type { RoutesOf, WithPrefixed, WithRoute } from './contract.ts';
import { isSchema } from '../http/validation.ts';
import { routeHookLists, type HookLists } from '../http/hooks.ts';
import type { Decoration } from '../http/decorations.ts';
import { resolveCompression } from '../http/compression.ts';
import { checkKnownKeys } from '../core/options-check.ts';
import { announceAttach, announceRoute, type RouteListener } from './route-announce.ts';
import type { MiddlewareRecord, RouteRecord } from './route-record.ts';

export type { MiddlewareRecord, RouteRecord } from './route-record.ts';

/**
 * Registers a route: `(path, ...handlers)` or `(path, options, ...handlers)`. Returns the
 * router, its type carrying the route (routing/contract.ts) for typed clients. `M` is the
 * method's name in that map (`get`, `post`, …, `any`).
 */
export interface RouteMethod<Self, M extends string = string> {
  <Path extends string>(
    path: Path,
    handler: Handler<RequestFor<Path, {}>>,
    ...more: Handler<RequestFor<Path, {}>>[]
  ): Self & WithRoute<Path, M, {}>;
  <Path extends string, const O extends RouteOptions>(
    path: Path,
    options: O,
    ...handlers: RouteHandlers<Path, O>
  ): Self & WithRoute<Path, M, O>;
}

/**
 * A route's handlers. With `response` schemas the last one (the handler) must return a
 * declared reply; route middleware before it stays free.
 */
export type RouteHandlers<Path extends string, O> = O extends { readonly response: infer Rs extends ResponseSchemas }
  ? // Middleware sees the same (req, res) as the handler: TypeScript types each argument from all
    // the elements' parameters together, so they must agree. Plain middleware still fits.
    [...Handler<RequestFor<Path, O>, TypedResponse<Rs>>[], ReplyHandler<RequestFor<Path, O>, TypedResponse<Rs>, Next, Rs>]
  : [Handler<RequestFor<Path, O>>, ...Handler<RequestFor<Path, O>>[]];

export class Router {
  /** @internal */ readonly _routes: RouteRecord[] = [];
  /** @internal */ readonly _middleware: MiddlewareRecord[] = [];
  /** @internal */ readonly _children: { prefix: string; router: Router }[] = [];
  /** @internal */ _errorHandler: ErrorHandler | undefined = undefined;
  /** Hooks for this router's routes and the routers below it, by name (Scope.addHook). @internal */
  _hooks: HookLists = {};
  /** Decorations this router's requests and responses get (Scope.decorateRequest/decorateReply). @internal */
  readonly _requestDecorations: Decoration[] = [];
  /** @internal */ readonly _replyDecorations: Decoration[] = [];
  /** Set when the app starts: declaring anything more is an error. @internal */
  _frozen = false;
  /** Where this router is attached: its parents and the prefixes there. @internal */
  readonly _attachedTo: { parent: Router; prefix: string }[] = [];
  /** onRoute listeners of this scope (route-announce.ts). @internal */
  readonly _routeListeners: RouteListener[] = [];

  readonly get: RouteMethod<this, 'get'> = this.route('GET');
  readonly post: RouteMethod<this, 'post'> = this.route('POST');
  readonly put: RouteMethod<this, 'put'> = this.route('PUT');
  readonly patch: RouteMethod<this, 'patch'> = this.route('PATCH');
  readonly delete: RouteMethod<this, 'delete'> = this.route('DELETE');
  readonly head: RouteMethod<this, 'head'> = this.route('HEAD');
  readonly options: RouteMethod<this, 'options'> = this.route('OPTIONS');
  /** Every method on this path. */
  readonly any: RouteMethod<this, 'any'> = this.route(null);

  private route<M extends string>(method: HttpMethod | null): RouteMethod<this, M> {
    return ((path: string, ...rest: unknown[]) => {
      this._checkOpen(`app.${method === null ? 'any' : method.toLowerCase()}()`);
      parsePattern(path); // fail at declaration, not at startup
      if (rest.length === 0) throw new TypeError(`Route ${method ?? 'ANY'} ${path} needs a handler`);
      const options = typeof rest[0] === 'function' ? {} : (rest.shift() as RouteOptions);
      if (typeof options !== 'object' || options === null) throw new TypeError(`Route options for ${path} must be an object`);
      checkOptions(`${method ?? 'ANY'} ${path}`, options);
      if (rest.length === 0) throw new TypeError(`Route ${method ?? 'ANY'} ${path} needs a handler`);
      for (const h of rest)
        if (typeof h !== 'function') throw new TypeError(`Route ${method ?? 'ANY'} ${path}: handlers must be functions`);
      const hooks = routeHookLists(`Route ${method ?? 'ANY'} ${path}`, options.hooks);
      const record: RouteRecord = { method, path, options, handlers: rest as Handler<any>[], hooks };
      announceRoute(this, record); // onRoute listeners run first: one that throws leaves the route undeclared
      this._routes.push(record);
      return this;
    }) as RouteMethod<this, M>;
  }

  /**
   * Adds middleware for every route of this router (`use(mw)`), or for routes under a
   * literal prefix (`use('/admin', mw)`). Middleware runs before routes, in the order added.
   */
  use(...args: [Middleware, ...Middleware[]] | [string, Middleware, ...Middleware[]]): this {
    this._checkOpen('use()');
    const prefix = typeof args[0] === 'string' ? normalizePrefix(args.shift() as string) : null;
    const handlers = args as Middleware[];
    if (handlers.length === 0) throw new TypeError('use() needs at least one middleware');
    for (const h of handlers) {
      if ((h as unknown) instanceof Router) {
        const at = prefix ?? '/';
        throw new TypeError(`use() got a Router: routers are mounted with attach(), e.g. app.attach(${JSON.stringify(at)}, router)`);
      }
      if (typeof h !== 'function')
        throw new TypeError(`Middleware must be a function (req, res, next), got ${h === null ? 'null' : typeof h}`);
    }
    this._middleware.push({ prefix, handlers });
    return this;
  }

  /**
   * Mounts a router's routes under a prefix. Routes added to it later are included too (at run
   * time; the returned type carries the routes it had when attached).
   */
  attach<const P extends string, R extends Router>(prefix: P, router: R): this & WithPrefixed<P, RoutesOf<R>> {
    this._checkOpen('attach()');
    if (!(router instanceof Router)) throw new TypeError('attach() needs a Router');
    if ((router as Router) === this) throw new TypeError('A router cannot be attached to itself');
    const at = normalizePrefix(prefix);
    announceAttach(this, at, router);
    this._children.push({ prefix: at, router });
    router._attachedTo.push({ parent: this, prefix: at });
    return this as this & WithPrefixed<P, RoutesOf<R>>; // the phantom route map: a type, nothing to add
  }

  /** Handles errors thrown by this router's routes (and routers attached to it) before the app's handler. */
  error(handler: ErrorHandler): this {
    this._checkOpen('error()');
    if (typeof handler !== 'function') throw new TypeError('error() needs a function');
    this._errorHandler = handler;
    return this;
  }

  /** Throws once the app has started: routes, hooks and plugins are compiled once, at start. @internal */
  _checkOpen(what: string): void {
    if (this._frozen)
      throw new Error(
        `${what} after the app started: declare routes, middleware, hooks and plugins before listen() or the first app.request()`,
      );
  }
}

const SCHEMA_KEYS = ['params', 'query', 'body', 'headers', 'cookies'] as const;
const BODY_KINDS = new Set(['json', 'urlencoded', 'multipart', 'text']);
/** Every route option: one added to RouteOptions and not here fails to compile (`hooks`: lifecycle hooks per route). */
const ROUTE_KEYS = Object.keys({
  params: true,
  query: true,
  body: true,
  headers: true,
  cookies: true,
  bodyLimit: true,
  consumes: true,
  timeout: true,
  compress: true,
  dedup: true,
  hooks: true,
  response: true,
  serialize: true,
  summary: true,
  description: true,
  tags: true,
  deprecated: true,
  operationId: true,
  security: true,
  hide: true,
} satisfies Record<keyof RouteOptions | 'hooks', true>);
const RESPONSE_KEY = /^(?:[1-5]\d\d|[1-5]XX|default)$/;

/** `path` is `METHOD /pattern`, the route as the messages name it. */
function checkOptions(path: string, options: RouteOptions): void {
  checkKnownKeys(`Route ${path}`, options, ROUTE_KEYS);
  for (const key of SCHEMA_KEYS) {
    const s = options[key];
    if (s !== undefined && !isSchema(s))
      throw new TypeError(`Route ${path}: options.${key} must be a Standard Schema validator (e.g. a Zod schema)`);
  }
  if (options.bodyLimit !== undefined && !(Number.isInteger(options.bodyLimit) && options.bodyLimit >= 0)) {
    throw new TypeError(`Route ${path}: bodyLimit must be a non-negative integer`);
  }
  if (options.timeout !== undefined && !(Number.isFinite(options.timeout) && options.timeout >= 0)) {
    throw new TypeError(`Route ${path}: timeout must be a non-negative number of milliseconds`);
  }
  if (options.dedup !== undefined && typeof options.dedup !== 'boolean') throw new TypeError(`Route ${path}: dedup must be a boolean`);
  if (options.serialize !== undefined && options.serialize !== 'json' && options.serialize !== 'compiled')
    throw new TypeError(`Route ${path}: serialize must be 'json' or 'compiled'`);
  if (options.serialize === 'compiled' && options.response === undefined)
    throw new TypeError(`Route ${path}: serialize: 'compiled' needs response schemas to compile ({ response: { 200: User } })`);
  if (
    options.compress !== undefined &&
    typeof options.compress !== 'boolean' &&
    (typeof options.compress !== 'object' || options.compress === null)
  ) {
    throw new TypeError(`Route ${path}: compress must be a boolean or compression options`);
  }
  if (typeof options.compress === 'object') resolveCompression(options.compress, null); // checked now, not at listen()
  checkDocs(path, options);
  if (options.consumes !== undefined) {
    if (!Array.isArray(options.consumes) || options.consumes.length === 0 || !options.consumes.every((k) => BODY_KINDS.has(k))) {
      throw new TypeError(`Route ${path}: consumes must list some of json, urlencoded, multipart, text`);
    }
  }
}

/** The reply schemas and documentation fields: wrong types fail at declaration, not in a generator. */
function checkDocs(path: string, options: RouteOptions): void {
  const { response } = options;
  if (response !== undefined) {
    if (typeof response !== 'object' || response === null || Array.isArray(response))
      throw new TypeError(`Route ${path}: response must map statuses to schemas, e.g. { 200: User }`);
    for (const [status, schema] of Object.entries(response)) {
      if (!RESPONSE_KEY.test(status))
        throw new TypeError(`Route ${path}: response key "${status}" is not a status (100-599), a class like "2XX", or "default"`);
      if (!isSchema(schema))
        throw new TypeError(`Route ${path}: response[${status}] must be a Standard Schema validator (e.g. a Zod schema)`);
    }
  }
  for (const key of ['summary', 'description', 'operationId'] as const) {
    const v = options[key];
    if (v !== undefined && (typeof v !== 'string' || v === '')) throw new TypeError(`Route ${path}: ${key} must be a non-empty string`);
  }
  for (const key of ['deprecated', 'hide'] as const) {
    const v = options[key];
    if (v !== undefined && typeof v !== 'boolean') throw new TypeError(`Route ${path}: ${key} must be a boolean`);
  }
  const { tags, security } = options;
  if (tags !== undefined && !(Array.isArray(tags) && tags.every((t) => typeof t === 'string' && t !== '')))
    throw new TypeError(`Route ${path}: tags must be an array of non-empty strings`);
  if (
    security !== undefined &&
    !(
      Array.isArray(security) &&
      security.every(
        (req) =>
          typeof req === 'object' &&
          req !== null &&
          Object.values(req).every((scopes) => Array.isArray(scopes) && scopes.every((x) => typeof x === 'string')),
      )
    )
  )
    throw new TypeError(`Route ${path}: security must be an array of { scheme: [scopes] } objects, e.g. [{ apiKey: [] }]`);
}
