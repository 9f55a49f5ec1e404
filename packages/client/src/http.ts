// @tachyon/client/http: a typed HTTP client inferred from the server app's type, with no code
// generation: `client<typeof app>(baseUrl)`. Zero dependencies, fetch only (browsers, Node,
// Deno, Bun). The app's type is read structurally (its `~routes` member, a type that does not
// exist at run time), so `import type { app }` pulls no server code into a bundle.

// ----- what the client reads from the app's type ------------------------------------------------

import type { InputOf } from './schema-types.ts';

/** The route map an app type carries: `{ '/users/:id': { get: RouteOptions } }`. */
export type RoutesOf<App> = App extends { readonly '~routes': infer R } ? R : {};

/** The HTTP methods the client has, by their names in the route map. */
export type ClientMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** Paths that answer `M` (a route of that method, or `app.any`). */
export type PathsFor<R, M extends string> = {
  [P in keyof R]: R[P] extends { readonly [K in M]: unknown } ? P : R[P] extends { readonly any: unknown } ? P : never;
}[keyof R] &
  string;

/** The options the route at `P` was declared with, for `M`. */
export type RouteOptionsOf<R, P extends keyof R, M extends string> = R[P] extends { readonly [K in M]: infer O }
  ? O
  : R[P] extends { readonly any: infer O }
    ? O
    : never;

type ParamNames<P extends string> = P extends `${infer Head}/${infer Tail}`
  ? ParamNames<Head> | ParamNames<Tail>
  : P extends `:${infer Name}`
    ? Name
    : P extends '*'
      ? '*'
      : never;

/** A value that goes into the path or the query string (as `String(value)`). */
export type ParamValue = string | number | boolean | bigint;
/** A query value: repeated for arrays; undefined and null are left out. */
export type QueryValue = ParamValue | null | undefined | readonly (ParamValue | null | undefined)[];

type Field<O, K extends string> = O extends { readonly [P in K]: infer S } ? S : undefined;

/** `{}` when `T` has no required key, so that the whole argument may be left out. */
type Part<K extends string, T, Required extends boolean> = Required extends true ? { [P in K]: T } : { [P in K]?: T };
type HasRequired<T> = {} extends T ? false : true;

type ParamsPart<P extends string, O> = [ParamNames<P>] extends [never]
  ? { params?: undefined }
  : Field<O, 'params'> extends undefined
    ? { params: { [K in ParamNames<P>]: ParamValue } }
    : { params: InputOf<Field<O, 'params'>> };

type QueryPart<O> =
  Field<O, 'query'> extends undefined
    ? { query?: Record<string, QueryValue> }
    : Part<'query', InputOf<Field<O, 'query'>>, HasRequired<InputOf<Field<O, 'query'>>>>;

type BodyPart<O> =
  Field<O, 'body'> extends undefined
    ? { body?: unknown }
    : Part<'body', InputOf<Field<O, 'body'>>, undefined extends InputOf<Field<O, 'body'>> ? false : true>;

type HeadersPart<O> =
  Field<O, 'headers'> extends undefined
    ? { headers?: Record<string, string> }
    : Part<'headers', InputOf<Field<O, 'headers'>> & Record<string, string>, HasRequired<InputOf<Field<O, 'headers'>>>>;

/** What one call takes: params (required when the path has some), query, body, headers, and fetch's signal. */
export type CallInit<P extends string, O> = ParamsPart<P, O> &
  QueryPart<O> &
  BodyPart<O> &
  HeadersPart<O> & {
    /** Aborts the request (the promise rejects with the signal's reason). */
    signal?: AbortSignal;
  };

/** The call's arguments: the init may be left out when nothing in it is required. */
export type CallArgs<P extends string, O> = {} extends CallInit<P, O> ? [init?: CallInit<P, O>] : [init: CallInit<P, O>];

// ----- what a call resolves with ----------------------------------------------------------------

/** One answer: its status, whether it is 2xx, the parsed body, the headers. */
export interface Reply<S extends number, Ok extends boolean, D> {
  readonly status: S;
  readonly ok: Ok;
  /** JSON bodies parsed, text as a string, other types as an ArrayBuffer; undefined without a body. */
  readonly data: D;
  readonly headers: Headers;
}

type NumericStatus<K> = K extends number ? K : K extends `${infer N extends number}` ? N : never;
type IsOk<K> = `${K & (string | number)}` extends `2${string}` ? true : false;

/** One member per declared status: `data` typed from that status's schema, `ok` from its class. */
type ReplyFor<Rs> = {
  [K in keyof Rs]: K extends 'default'
    ? Reply<number, boolean, InputOf<Rs[K]>>
    : K extends `${infer C extends 1 | 2 | 3 | 4 | 5}XX`
      ? Reply<number, C extends 2 ? true : false, InputOf<Rs[K]>>
      : Reply<NumericStatus<K>, IsOk<K>, InputOf<Rs[K]>>;
}[keyof Rs];

/**
 * What a call resolves with: one member per status in the route's `response` (narrow with
 * `ok` or `status`), or untyped data for a route without one. Statuses a route did not declare
 * (a 400 from validation, a 500) still arrive, with the body the server sent.
 */
export type ResultOf<O> = O extends { readonly response: infer Rs } ? ReplyFor<Rs> : Reply<number, boolean, unknown>;

// ----- the client -------------------------------------------------------------------------------

/**
 * `O` is a type parameter with a default, not an alias inside the parameter types, because of
 * how TypeScript checks a generic call: while it still infers `P`, it reads the parameter types
 * with `P` as its constraint (every path of the method), so `RouteOptionsOf<R, P, M>` written
 * there was resolved for the whole union on every call. `O` is inferred from nothing and so
 * takes its default once `P` is the path's literal: a third fewer instantiations per call
 * (bench/type-cost, docs/typed-clients.md).
 */
type Method<R, M extends ClientMethod> = <P extends PathsFor<R, M>, O = RouteOptionsOf<R, P, M>>(
  path: P,
  ...args: CallArgs<P, O>
) => Promise<ResultOf<O>>;

/** A typed client of an app's HTTP routes: one method per HTTP method, paths as declared. */
export interface HttpClient<App> {
  get: Method<RoutesOf<App>, 'get'>;
  post: Method<RoutesOf<App>, 'post'>;
  put: Method<RoutesOf<App>, 'put'>;
  patch: Method<RoutesOf<App>, 'patch'>;
  delete: Method<RoutesOf<App>, 'delete'>;
}

export interface HttpClientOptions {
  /** Headers for every request (a function is called per request: tokens that change). Per-call headers win. */
  headers?: Record<string, string> | (() => Record<string, string>);
  /** The fetch to use (default: the global one): a test double, a fetch with retries, undici's. */
  fetch?: typeof globalThis.fetch;
  /** Other fetch options for every request (credentials, mode, cache, …); method, headers and body are the client's. */
  init?: Omit<RequestInit, 'method' | 'headers' | 'body' | 'signal'>;
}

/** What the client accepts for one call, at run time (the types above narrow it per route). */
interface AnyInit {
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/**
 * A typed client of the app whose type is `App`: `client<typeof app>('http://localhost:3000')`.
 * `baseUrl` may carry a path prefix (`https://api.example.com/v1`), or be `''` in a browser
 * for the page's own origin. Import the app's type with `import type`: no server code follows.
 */
export function client<App>(baseUrl: string, options: HttpClientOptions = {}): HttpClient<App> {
  if (typeof baseUrl !== 'string') throw new TypeError('client(baseUrl): baseUrl must be a string such as "http://localhost:3000"');
  if (typeof options !== 'object' || options === null) throw new TypeError('client(baseUrl, options): options must be an object');
  const doFetch = options.fetch ?? globalThis.fetch;
  if (typeof doFetch !== 'function') throw new TypeError('client(): this runtime has no fetch; pass one as options.fetch');
  const base = baseUrl.replace(/\/+$/, '');
  const call = (method: string) => (path: string, init?: AnyInit) => request(doFetch, base, options, method, path, init ?? {});
  return {
    get: call('GET'),
    post: call('POST'),
    put: call('PUT'),
    patch: call('PATCH'),
    delete: call('DELETE'),
  } as unknown as HttpClient<App>;
}

async function request(
  doFetch: typeof globalThis.fetch,
  base: string,
  options: HttpClientOptions,
  method: string,
  path: string,
  init: AnyInit,
): Promise<Reply<number, boolean, unknown>> {
  if (typeof path !== 'string' || !path.startsWith('/')) throw new TypeError(`${method} ${String(path)}: the path must start with "/"`);
  const shared = typeof options.headers === 'function' ? options.headers() : options.headers;
  const headers: Record<string, string> = { ...shared, ...init.headers };
  let body: BodyInit | undefined;
  if (init.body !== undefined) {
    body = asFetchBody(init.body);
    if (body === undefined) {
      body = JSON.stringify(init.body);
      if (!hasHeader(headers, 'content-type')) headers['content-type'] = 'application/json';
    }
  }
  const url = base + fillPath(path, init.params ?? {}) + queryString(init.query);
  const res = await doFetch(url, { ...options.init, method, headers, body, signal: init.signal });
  return { status: res.status, ok: res.ok, data: await readBody(res, method, url), headers: res.headers };
}

/** Bodies fetch sends as they are (forms, bytes, files); anything else goes as JSON. */
function asFetchBody(body: unknown): BodyInit | undefined {
  if (
    (typeof FormData !== 'undefined' && body instanceof FormData) ||
    body instanceof URLSearchParams ||
    (typeof Blob !== 'undefined' && body instanceof Blob) ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    (typeof ReadableStream !== 'undefined' && body instanceof ReadableStream)
  )
    return body as BodyInit;
  return undefined;
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  for (const key in headers) if (key.toLowerCase() === name) return true;
  return false;
}

/** `/users/:id` with `{ id: 'a b' }` → `/users/a%20b`; a `*` keeps its slashes. */
export function fillPath(path: string, params: Record<string, unknown>): string {
  return path.replace(/:([^/]+)|\*/g, (match, name: string | undefined) => {
    const key = name ?? '*';
    const value = params[key];
    if (value === undefined || value === null) throw new TypeError(`${path}: missing param "${key}"`);
    const text = String(value);
    return name === undefined ? text.split('/').map(encodeURIComponent).join('/') : encodeURIComponent(text);
  });
}

/** `?a=1&tag=x&tag=y`: arrays repeat the key; undefined and null are left out. */
export function queryString(query: Record<string, unknown> | undefined): string {
  if (query === undefined || query === null) return '';
  const search = new URLSearchParams();
  for (const key of Object.keys(query)) {
    const value = query[key];
    for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined && v !== null) search.append(key, String(v));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/** JSON by content type, text for text/* (or no type), bytes otherwise; undefined when there is no body. */
async function readBody(res: globalThis.Response, method: string, url: string): Promise<unknown> {
  if (method === 'HEAD' || res.status === 204 || res.status === 304) return undefined;
  const type = res.headers.get('content-type')?.toLowerCase() ?? '';
  if (/[/+]json\b/.test(type)) {
    const text = await res.text();
    if (text === '') return undefined;
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new Error(`${method} ${url}: the ${res.status} reply says ${type} but is not JSON`, { cause: err });
    }
  }
  if (type === '' || type.startsWith('text/')) {
    const text = await res.text();
    return text === '' && type === '' ? undefined : text;
  }
  return res.arrayBuffer();
}
