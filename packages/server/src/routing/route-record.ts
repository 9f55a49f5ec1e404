// A route and a middleware entry as a router records them at declaration.
import type { Handler, HttpMethod, Middleware, RouteOptions } from '../http/types.ts';
import type { HookLists } from '../http/hooks.ts';

export interface RouteRecord {
  method: HttpMethod | null; // null: any method
  path: string;
  options: RouteOptions;
  handlers: Handler<any>[];
  /** The route's own hooks (options.hooks), checked and as lists. */
  hooks: HookLists;
}

export interface MiddlewareRecord {
  /** Literal prefix relative to the router, or null for every route of the router. */
  prefix: string | null;
  handlers: Middleware[];
}
