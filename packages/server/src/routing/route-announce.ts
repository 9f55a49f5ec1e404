// onRoute, at declaration (docs/hooks.md): a route is announced to the onRoute listeners of
// its router and every router above it as soon as its full path from the app is known — when
// it is declared on the app or on a scope, or when the router holding it is attached to one.
// A router that is not attached yet has no listeners above it: its routes are announced when
// it is attached (once per place it is attached at, each with that place's full path).
//
// Listeners are encapsulated as hooks are: one added in a scope hears the routes of that scope
// and the scopes below it. The root's path has no prefix; a detached tree's root is not an
// app, but no listener can sit on a detached router (only scopes take hooks), so nothing is
// announced with a partial path.
import { joinPaths, parsePattern, type Pattern } from '../core/path.ts';
import type { MiddlewareRecord, RouteRecord } from './route-record.ts';
import { describeHttpRoute, middlewareFor, type RouteInfo, type ScopedMiddleware } from './route-info.ts';

/**
 * Hears routes as they are declared: the route's description, its options as declared, and
 * (HTTP routes) its first handler, so an app can leave out the routes it made itself.
 */
export type RouteListener = (route: RouteInfo, options: unknown, handler: Function | undefined) => void;

/** The parts of a Router this module reads (typed here: router.ts imports this module). */
interface Router {
  readonly _routes: readonly RouteRecord[];
  readonly _middleware: readonly MiddlewareRecord[];
  readonly _children: readonly { prefix: string; router: Router }[];
  readonly _attachedTo: readonly { parent: Router; prefix: string }[];
  readonly _routeListeners: readonly RouteListener[];
}

/** One way from the app down to a router: the routers in order (the app first) and their full prefixes. */
interface Chain {
  routers: Router[];
  prefixes: string[];
}

/** `chain` extended to `router`, attached at `prefix` below the chain's last router. */
function below(chain: Chain, router: Router, prefix: string): Chain {
  return { routers: [...chain.routers, router], prefixes: [...chain.prefixes, joinPaths(chain.prefixes.at(-1)!, prefix)] };
}

/** Every way from a root down to `router` (a router attached in two places has two). */
function chainsTo(router: Router): Chain[] {
  if (router._attachedTo.length === 0) return [{ routers: [router], prefixes: [''] }];
  return router._attachedTo.flatMap(({ parent, prefix }) => chainsTo(parent).map((up) => below(up, router, prefix)));
}

function hasListeners(chain: Chain): boolean {
  return chain.routers.some((r) => r._routeListeners.length > 0);
}

/** A route of the last router of `chain`, described with its full path. */
function describe(chain: Chain, record: RouteRecord): RouteInfo {
  const pattern = parsePattern(joinPaths(chain.prefixes.at(-1)!, record.path));
  return describeHttpRoute(record, pattern, middlewareCount(chain, pattern));
}

/** Announces one HTTP route of the last router of `chain` to the listeners along it. */
function announceHttp(chain: Chain, record: RouteRecord): void {
  if (!hasListeners(chain)) return;
  const info = describe(chain, record);
  for (const r of chain.routers) for (const listen of r._routeListeners) listen(info, record.options, record.handlers[0]);
}

/** The app and router middleware that run before the route, as declared so far. */
function middlewareCount(chain: Chain, pattern: Pattern): number {
  const scoped: ScopedMiddleware[] = [];
  chain.routers.forEach((r, i) => {
    for (const m of r._middleware)
      scoped.push({ prefix: m.prefix === null ? null : joinPaths(chain.prefixes[i]!, m.prefix), handlers: m.handlers });
  });
  return middlewareFor(pattern, scoped).length;
}

/** Visits every route of `router` and of the routers below it, each with its chain. */
function eachRoute(router: Router, chain: Chain, visit: (chain: Chain, record: RouteRecord) => void): void {
  for (const record of router._routes) visit(chain, record);
  for (const { router: child, prefix } of router._children) eachRoute(child, below(chain, child, prefix), visit);
}

/** A route was declared on `router`. */
export function announceRoute(router: Router, record: RouteRecord): void {
  for (const chain of chainsTo(router)) announceHttp(chain, record);
}

/** `child` is being attached to `parent` at `prefix`: its routes, and those below it, get a path. */
export function announceAttach(parent: Router, prefix: string, child: Router): void {
  for (const up of chainsTo(parent)) eachRoute(child, below(up, child, prefix), announceHttp);
}

/**
 * A listener is added on `router`: it hears the routes already declared there and below (with
 * their full paths), then every later one.
 */
export function replayRoutes(router: Router, listen: RouteListener): void {
  for (const chain of chainsTo(router))
    eachRoute(router, chain, (c, record) => listen(describe(c, record), record.options, record.handlers[0]));
}
