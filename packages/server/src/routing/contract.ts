// The route types an App or Router accumulates as routes are declared and routers attached:
// `typeof app` carries `{ '/users/:id': { get: Options } }`, which typed clients
// (@tachyon/client/http) and generators read. Types only: nothing exists at run time.
//
// Each route method returns `this & WithRoute<…>`: an intersection keeps the caller's own
// class (App, Scope, a subclass) and merges the maps (two methods on one path intersect into
// `{ get: …; post: … }`). The map sits under a string key, not a symbol, so that a client
// reads it structurally without importing anything from the server.

/** The key of the phantom member carrying the route map (never present at run time). */
export type RoutesKey = '~routes';

/** Declared routes by full path, then by lower-case method (`any` for `app.any`): the options as declared. */
export type RouteMap = { readonly [path: string]: { readonly [method: string]: object } };

/** What a route method adds to the type of the router it returns (nothing for a path only known at run time). */
export type WithRoute<Path extends string, M extends string, O> = string extends Path
  ? {}
  : { readonly '~routes': { readonly [P in Path]: { readonly [K in M]: O } } };

/** The route map of an App, Scope or Router type (`{}` when it declares none). */
export type RoutesOf<T> = T extends { readonly '~routes': infer R } ? R : {};

/** `joinPaths` (core/path.ts) at the type level: `/api` + `/users` → `/api/users`. */
export type JoinPath<Prefix extends string, Path extends string> = Prefix extends '' | '/'
  ? Path
  : Path extends '/' | ''
    ? TrimSlash<Prefix>
    : `${TrimSlash<Prefix>}${Path}`;

type TrimSlash<P extends string> = P extends `${infer Head}/` ? (Head extends '' ? P : TrimSlash<Head>) : P;

/** What `attach(prefix, router)` adds: the router's routes under the prefix. */
export type WithPrefixed<Prefix extends string, R> = {
  readonly '~routes': { readonly [P in keyof R & string as JoinPath<Prefix, P>]: R[P] };
};
