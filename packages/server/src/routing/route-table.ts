// The route table: every declared route with its full path and the middleware and error
// handlers that apply to it, flattened once from the app and its routers. The app compiles
// it onto the uWS router; `app.routes()` exposes a read-only description of it (for docs,
// OpenAPI, tooling).
import { joinPaths, parsePattern, type Pattern } from '../core/path.ts';
import type { Router } from './router.ts';
import type { MiddlewareRecord, RouteRecord } from './route-record.ts';
import type { ErrorHandler, Handler } from '../http/types.ts';
import { middlewareFor, type ScopedMiddleware } from './route-info.ts';
import { mergeHooks, NO_HOOKS, type HookLists } from '../http/hooks.ts';
import type { Decoration } from '../http/decorations.ts';

export interface FlatRoute {
  record: RouteRecord;
  pattern: Pattern;
  middleware: Handler<any>[];
  errorHandlers: ErrorHandler[];
  /** Hooks of the app, the enclosing scopes and the route, in running order. */
  hooks: HookLists;
  /** What the route's scope decorates requests and responses with (the same array for every route of a scope). */
  requestDecorations: readonly Decoration[];
  replyDecorations: readonly Decoration[];
}

/** What a router hands down to the routers attached below it. */
interface Inherited {
  middleware: ScopedMiddleware[];
  errors: ErrorHandler[];
  hooks: HookLists;
  requestDecorations: readonly Decoration[];
  replyDecorations: readonly Decoration[];
}

/** Every route of `root` and the routers attached to it, with full paths. */
export function flattenRoutes(root: Router): FlatRoute[] {
  const out: FlatRoute[] = [];
  flatten(root, '', { middleware: [], errors: [], hooks: NO_HOOKS, requestDecorations: [], replyDecorations: [] }, out);
  return out;
}

/** What the root router gives everything below it: the not-found and 405 answers get the same. */
export function rootScope(root: Router): Pick<FlatRoute, 'hooks' | 'requestDecorations' | 'replyDecorations'> {
  return { hooks: root._hooks, requestDecorations: root._requestDecorations, replyDecorations: root._replyDecorations };
}

/**
 * The app's own middleware (as declared: the root has no prefix to add) and error handler:
 * what the not-found and 405 answers run, which no declared route carries.
 */
export function rootHandlers(root: Router): { middleware: ScopedMiddleware[]; errors: ErrorHandler[] } {
  return {
    middleware: root._middleware.map((m) => ({ prefix: m.prefix, handlers: m.handlers })),
    errors: root._errorHandler ? [root._errorHandler] : [],
  };
}

function flatten(router: Router, prefix: string, inherited: Inherited, out: FlatRoute[]): void {
  const scoped = [
    ...inherited.middleware,
    ...router._middleware.map((m: MiddlewareRecord) => ({
      prefix: m.prefix === null ? null : joinPaths(prefix, m.prefix),
      handlers: m.handlers,
    })),
  ];
  const errorChain = router._errorHandler ? [router._errorHandler, ...inherited.errors] : inherited.errors;
  const own: Inherited = {
    middleware: scoped,
    errors: errorChain,
    hooks: mergeHooks(inherited.hooks, router._hooks),
    requestDecorations: extend(inherited.requestDecorations, router._requestDecorations),
    replyDecorations: extend(inherited.replyDecorations, router._replyDecorations),
  };
  for (const record of router._routes) {
    const pattern = parsePattern(joinPaths(prefix, record.path));
    out.push({
      record,
      pattern,
      middleware: middlewareFor(pattern, scoped),
      errorHandlers: errorChain,
      hooks: mergeHooks(own.hooks, record.hooks),
      requestDecorations: own.requestDecorations,
      replyDecorations: own.replyDecorations,
    });
  }
  for (const child of router._children) flatten(child.router, joinPaths(prefix, child.prefix), own, out);
}

/** The outer list when a router adds nothing (one class per scope, not per router). */
function extend(outer: readonly Decoration[], more: readonly Decoration[]): readonly Decoration[] {
  if (more.length === 0) return outer;
  return outer.length === 0 ? more : [...outer, ...more];
}

/** Every middleware function declared on `root` and the routers attached to it, each once. */
export function allMiddleware(root: Router): Set<Function> {
  const out = new Set<Function>();
  for (const r of allRouters(root)) for (const m of r._middleware) for (const h of m.handlers) out.add(h);
  return out;
}

/** Closes `root` and every router attached to it: declaring anything more throws (the app started). */
export function freezeRouters(root: Router): void {
  for (const r of allRouters(root)) r._frozen = true;
}

/** Every router in the tree (the app first), once each. */
export function allRouters(root: Router): Router[] {
  const seen = new Set<Router>();
  const walk = (r: Router) => {
    if (seen.has(r)) return;
    seen.add(r);
    for (const c of r._children) walk(c.router);
  };
  walk(root);
  return [...seen];
}
