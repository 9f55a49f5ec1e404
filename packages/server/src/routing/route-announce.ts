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

/** Every way from a root down to `router` (a router attached in two places has two). */
export function chainsTo(router: Router): Chain[] {
  if (router._attachedTo.length === 0) return [{ routers: [router], prefixes: [''] }];
  const out: Chain[] = [];
  for (const { parent, prefix } of router._attachedTo)
    for (const up of chainsTo(parent))
      out.push({
        routers: [...up.routers, router],
        prefixes: [...up.prefixes, joinPaths(up.prefixes[up.prefixes.length - 1]!, prefix)],
      });
  return out;
}

function hasListeners(chain: Chain): boolean {
  return chain.routers.some((r) => r._routeListeners.length > 0);
}

/** Announces one HTTP route of the last router of `chain` to the listeners along it. */
function announceHttp(chain: Chain, record: RouteRecord): void {
  const at = chain.prefixes[chain.prefixes.length - 1]!;
  const pattern = parsePattern(joinPaths(at, record.path));
  const info = describeHttpRoute(record, pattern, middlewareCount(chain, pattern));
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

/** A route was declared on `router`. */
export function announceRoute(router: Router, record: RouteRecord): void {
  for (const chain of chainsTo(router)) if (hasListeners(chain)) announceHttp(chain, record);
}

/** `child` is being attached to `parent` at `prefix`: its routes, and those below it, get a path. */
export function announceAttach(parent: Router, prefix: string, child: Router): void {
  for (const up of chainsTo(parent)) {
    const last = up.prefixes[up.prefixes.length - 1]!;
    walkDown(child, { routers: [...up.routers, child], prefixes: [...up.prefixes, joinPaths(last, prefix)] });
  }
}

function walkDown(router: Router, chain: Chain): void {
  if (hasListeners(chain)) for (const record of router._routes) announceHttp(chain, record);
  const at = chain.prefixes[chain.prefixes.length - 1]!;
  for (const { router: child, prefix } of router._children)
    walkDown(child, { routers: [...chain.routers, child], prefixes: [...chain.prefixes, joinPaths(at, prefix)] });
}

/**
 * A listener is added on `router`: it hears the routes already declared there and below (with
 * their full paths), then every later one.
 */
export function replayRoutes(router: Router, listen: RouteListener): void {
  for (const chain of chainsTo(router)) replayDown(router, chain, listen);
}

function replayDown(router: Router, chain: Chain, listen: RouteListener): void {
  const at = chain.prefixes[chain.prefixes.length - 1]!;
  for (const record of router._routes) {
    const pattern = parsePattern(joinPaths(at, record.path));
    listen(describeHttpRoute(record, pattern, middlewareCount(chain, pattern)), record.options, record.handlers[0]);
  }
  for (const { router: child, prefix } of router._children)
    replayDown(child, { routers: [...chain.routers, child], prefixes: [...chain.prefixes, joinPaths(at, prefix)] }, listen);
}
