// Startup compilation: the route table, every chain compiled once, registered with the uWS
// router; then what no route claims: 405/OPTIONS for paths with other methods, and the
// not-found handler behind the app's middleware. Runs once, when the app starts.
import { HttpError } from '../http/errors.ts';
import { compileRoute, type Dispatcher, type RouteSpec } from '../http/compile-route.ts';
import type { Request } from '../http/io/request.ts';
import type { ErrorHandler, Handler, HttpMethod, NotFoundHandler } from '../http/types.ts';
import { parsePattern, type Pattern } from '../core/path.ts';
import { flattenRoutes, rootHandlers, rootScope, type FlatRoute } from '../routing/route-table.ts';
import { middlewareFor, type ScopedMiddleware } from '../routing/route-info.ts';
import { decoratedClass } from '../http/decorations.ts';
import { withReplyCheck } from '../http/reply-check.ts';
import { compileSerializer } from '../http/serializer.ts';
import { Request as RequestClass } from '../http/io/request.ts';
import { Response as ResponseClass } from '../http/io/response.ts';
import type { Router } from '../routing/router.ts';
import { checkRouteTable } from '../routing/route-checks.ts';
import { resolveCompression, type Compression } from '../http/compression.ts';
import { withTlsFiles, type TlsOptions } from '../serving/tls.ts';
import type { WsHub } from '../realtime/hub.ts';
import type { WsRouteSpec } from '../realtime/behavior.ts';
import type { WsHookLists } from '../realtime/ws-hooks.ts';
import { compileWsRoute } from '../realtime/route.ts';
import type { Settings } from '../core/settings.ts';
import { loadUws, type UwsApp, type UwsHandler, type UwsRequest, type UwsResponse, type UwsWebSocketBehavior } from '../uws/index.ts';

const UWS_METHOD = { GET: 'get', POST: 'post', PUT: 'put', PATCH: 'patch', DELETE: 'del', HEAD: 'head', OPTIONS: 'options' } as const;
type UwsVerb = 'get' | 'post' | 'put' | 'patch' | 'del' | 'head' | 'options' | 'any';

/** What the compiler reads from the app. */
export interface CompileInput {
  root: Router;
  dispatcher: Dispatcher;
  settings: Settings;
  hub: WsHub;
  wsRoutes: readonly WsRouteSpec[];
  trailingSlash: 'ignore' | 'strict' | 'redirect';
  compression: Compression | null;
  tls: TlsOptions | undefined;
  maxHeaderSize: number | undefined;
  notFound: NotFoundHandler | undefined;
  /** The app's WebSocket hooks (each route adds its own). */
  wsHooks: WsHookLists;
}

/** Builds the uWS app with every route registered (on each SNI hostname too). */
export function compileApp(c: CompileInput): UwsApp {
  const uwsModule = loadUws(c.maxHeaderSize);
  const app = c.tls ? withTlsFiles(c.tls, (o) => uwsModule.SSLApp(o)) : uwsModule.App();
  // Registrations are collected, then applied to the default router and, since uWS keeps
  // one router per SNI server name, replayed for each extra hostname.
  const registrations: ([UwsVerb, string, UwsHandler] | ['ws', string, UwsWebSocketBehavior])[] = [];
  const wsApp = { hooks: c.wsHooks, RequestClass: decoratedClass(RequestClass, rootScope(c.root).requestDecorations) };
  const add = (verb: UwsVerb, path: string, handler: UwsHandler) => registrations.push([verb, path, handler]);
  for (const spec of c.wsRoutes) {
    const route = compileWsRoute(spec, c.settings, c.hub, uwsModule, c.tls !== undefined, wsApp);
    registrations.push(['ws', spec.pattern.path, route.behavior]);
    // The fallback transport (docs/realtime.md): uWS's ws() yields GETs without an upgrade to these.
    if (route.fallback !== null) {
      add('get', spec.pattern.path, route.fallback.get);
      add('post', spec.pattern.path, route.fallback.post);
    }
  }

  const routes = flattenRoutes(c.root);
  checkRouteTable(routes, c.trailingSlash);
  refuseFallbackOverlap(c.wsRoutes, routes);
  const { middleware: appMiddleware, errors: appErrors } = rootHandlers(c.root);
  const ctx = c.dispatcher;

  // Group by uWS pattern so 405/OPTIONS answers know every method of a path.
  const byPattern = new Map<string, { methods: Set<string>; hasAny: boolean }>();
  const explicitHead = new Set<string>();
  for (const r of routes)
    if (r.record.method === 'HEAD') for (const v of pathVariants(r.pattern.path, c.trailingSlash)) explicitHead.add(v.path);
  const register = (method: HttpMethod | null, path: string, spec: RouteSpec) => {
    const routeSpec = { ...spec, pattern: { ...spec.pattern, path } };
    if (method === null) add('any', path, compileRoute(routeSpec, ctx));
    else {
      add(UWS_METHOD[method], path, compileRoute(routeSpec, ctx));
      if (method === 'GET' && !explicitHead.has(path)) add('head', path, compileRoute(routeSpec, ctx, true));
    }
    const entry = byPattern.get(path) ?? { methods: new Set<string>(), hasAny: false };
    if (method === null) entry.hasAny = true;
    else {
      entry.methods.add(method);
      if (method === 'GET') entry.methods.add('HEAD');
    }
    byPattern.set(path, entry);
  };

  for (const r of routes) {
    const spec = specFor(r, c);
    for (const variant of pathVariants(r.pattern.path, c.trailingSlash)) {
      if (variant.redirect) add('any', variant.path, redirectToggleSlash);
      else register(r.record.method, variant.path, spec);
    }
  }

  // Paths with some methods: OPTIONS → 204 with Allow, anything else → 405.
  for (const [path, entry] of byPattern) {
    if (entry.hasAny || path === '/*') continue; // a catch-all: other methods are simply not found
    const allow = [...entry.methods, ...(entry.methods.has('OPTIONS') ? [] : ['OPTIONS'])].join(', ');
    const handler: Handler<any> = (req, res) => {
      res.header('allow', allow);
      if (req.method === 'OPTIONS') return res.status(204).end();
      throw new HttpError(405, `Method ${req.method} not allowed on ${req.path}`, { headers: { allow } });
    };
    add('any', path, compileRoute(virtualSpec(parsePattern(path), appMiddleware, appErrors, handler, c), ctx));
  }

  // Everything else: the not-found handler, behind the app's middleware.
  if (!byPattern.get('/*')?.hasAny) {
    const notFound = c.notFound;
    const handler: Handler<any> = notFound ? (req, res) => notFound(req, res) : notFoundError;
    add('any', '/*', compileRoute(virtualSpec(parsePattern('/*'), appMiddleware, appErrors, handler, c), ctx));
  }
  const apply = () => {
    for (const r of registrations) {
      if (r[0] === 'ws') app.ws(r[1], r[2]);
      else app[r[0]](r[1], r[2]);
    }
  };
  apply();
  for (const [hostname, identity] of Object.entries(c.tls?.sni ?? {})) {
    withTlsFiles(identity, (o) => app.addServerName(hostname, o));
    app.domain(hostname);
    apply();
  }
  c.hub.attach(app);
  return app;
}

/** uWS would hand a fallback route's GETs or POSTs to an HTTP route declared on the same path (docs/realtime.md). */
function refuseFallbackOverlap(wsRoutes: readonly WsRouteSpec[], routes: readonly FlatRoute[]): void {
  for (const ws of wsRoutes) {
    if (ws.behavior.fallback === undefined || ws.behavior.fallback === false) continue;
    const path = ws.pattern.path;
    const clash = routes.find(
      (r) => r.pattern.path === path && (r.record.method === null || r.record.method === 'GET' || r.record.method === 'POST'),
    );
    if (clash !== undefined)
      throw new Error(
        `ws ${path}: the fallback transport needs GET and POST ${path} for itself, and the app declares ${clash.record.method ?? 'any'} ${path}: move one of them`,
      );
  }
}

function specFor(r: FlatRoute, c: CompileInput): RouteSpec {
  const o = r.record.options;
  const parts = scopeParts(r);
  // validateResponses: routes with reply schemas check each reply (an onSend hook); others, and every route when off, are unchanged.
  const name = `${r.record.method ?? 'ANY'} ${r.pattern.path}`;
  if (c.settings.validateResponses && o.response !== undefined) parts.hooks = withReplyCheck(parts.hooks, name, o.response);
  return {
    ...parts,
    method: r.record.method,
    pattern: r.pattern,
    middleware: r.middleware,
    handlers: r.record.handlers,
    schemas: { params: o.params, query: o.query, body: o.body, headers: o.headers, cookies: o.cookies },
    consumes: o.consumes ?? ['json'],
    bodyLimit: o.bodyLimit ?? c.settings.bodyLimit,
    timeout: o.timeout ?? c.settings.requestTimeout,
    errorHandlers: r.errorHandlers,
    compression: resolveCompression(o.compress, c.compression),
    dedup: o.dedup ?? false,
    stringify: o.serialize === 'compiled' ? compileSerializer(name, o.response!) : null,
  };
}

/** The route's hooks and the classes its requests and responses are made from. */
function scopeParts(
  r: Pick<FlatRoute, 'hooks' | 'requestDecorations' | 'replyDecorations'>,
): Pick<RouteSpec, 'hooks' | 'RequestClass' | 'ResponseClass'> {
  return {
    hooks: r.hooks,
    RequestClass: decoratedClass(RequestClass, r.requestDecorations),
    ResponseClass: decoratedClass(ResponseClass, r.replyDecorations),
  };
}

/** Not-found and 405 answers: the app's middleware, error handler, hooks and decorations. */
function virtualSpec(pattern: Pattern, mw: ScopedMiddleware[], errors: ErrorHandler[], handler: Handler<any>, c: CompileInput): RouteSpec {
  return {
    ...scopeParts(rootScope(c.root)),
    method: null,
    pattern,
    middleware: middlewareFor(pattern, mw),
    handlers: [handler],
    schemas: {},
    consumes: ['json'],
    bodyLimit: c.settings.bodyLimit,
    timeout: c.settings.requestTimeout,
    errorHandlers: errors,
    compression: c.compression,
    dedup: false,
    stringify: null,
  };
}

/** The uWS patterns one declared path occupies under the trailing-slash policy. */
function pathVariants(path: string, policy: 'ignore' | 'strict' | 'redirect'): { path: string; redirect?: true }[] {
  if (path === '/' || path.endsWith('*') || policy === 'strict') return [{ path }];
  const other = path.endsWith('/') ? path.slice(0, -1) : `${path}/`;
  if (policy === 'ignore') return [{ path }, { path: other }];
  return [{ path }, { path: other, redirect: true }];
}

export function notFoundError(req: Request<any>): never {
  throw new HttpError(404, `Cannot ${req.method} ${req.path}`);
}

/** 308 (method-preserving) to the same URL with its trailing slash added or removed. */
function redirectToggleSlash(res: UwsResponse, req: UwsRequest): void {
  const url = req.getUrl();
  const target = url.endsWith('/') ? url.slice(0, -1) : `${url}/`;
  const q = req.getQuery();
  res
    .writeStatus('308 Permanent Redirect')
    .writeHeader('location', q ? `${target}?${q}` : target)
    .end();
}
