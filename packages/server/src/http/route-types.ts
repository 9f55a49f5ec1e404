// The shape of a route's validated request data, shared by Request and the route types. Kept
// apart from http/types.ts (which names Request and Response) so that request.ts imports no
// module that imports it back.

/** What a route's request carries once validated. Every key is optional. */
export interface RouteTypes {
  params?: unknown;
  query?: unknown;
  body?: unknown;
  headers?: unknown;
  cookies?: unknown;
}

// Written with `infer` rather than `keyof T`: keyof is contravariant, which would make
// Request<T> invariant and forbid using a plain Middleware inside a typed route's chain.
export type Get<T, K extends PropertyKey, D> = T extends { [P in K]: infer V } ? V : D;
