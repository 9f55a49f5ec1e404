// CORS options, checked and normalised once when `cors()` is called: a mistake in them is a
// bug in the app, so it fails at startup with a TypeError rather than per request.
import type { Request } from '../../http/io/request.ts';
import { checkKnownKeys } from '../../core/options-check.ts';

/**
 * Which origins may read responses: `'*'` (any, without credentials), one origin, a list, a
 * RegExp tested against the Origin header, or a function deciding per request (sync or
 * async) — returning `true` (reflect the request's origin), `false`/`null`/`undefined`
 * (no CORS headers), or the origin string to send.
 */
export type CorsOrigin =
  | '*'
  | string
  | readonly string[]
  | RegExp
  | ((origin: string, req: Request) => boolean | string | null | undefined | Promise<boolean | string | null | undefined>);

export interface CorsOptions {
  /** Default `'*'`. */
  origin?: CorsOrigin;
  /** Methods a preflight allows. Default GET, HEAD, PUT, POST, DELETE, PATCH. */
  methods?: readonly string[];
  /** Request headers a preflight allows. Default: those the preflight asks for (Access-Control-Request-Headers). */
  headers?: readonly string[];
  /** Response headers scripts may read beyond the CORS-safelisted ones. */
  exposeHeaders?: readonly string[];
  /** Send Access-Control-Allow-Credentials: true (cookies, HTTP auth). Never combined with `*`. */
  credentials?: boolean;
  /** Seconds a browser may cache a preflight answer. */
  maxAge?: number;
}

export type OriginFn = (origin: string, req: Request) => unknown;

/** What the middleware reads per request, all computed once. */
export interface CorsPolicy {
  /** 'fixed': the same Allow-Origin for everyone; 'match': decided from the Origin header. */
  kind: 'fixed' | 'list' | 'regexp' | 'function';
  fixed: string;
  list: ReadonlySet<string>;
  regexp: RegExp | null;
  fn: OriginFn | null;
  credentials: boolean;
  methods: string;
  /** Joined allowed request headers, or null to reflect Access-Control-Request-Headers. */
  headers: string | null;
  exposeHeaders: string | null;
  maxAge: string | null;
}

const DEFAULT_METHODS = ['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'PATCH'];
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const KNOWN = new Set(['origin', 'methods', 'headers', 'exposeHeaders', 'credentials', 'maxAge']);

export function resolveCorsOptions(options: CorsOptions): CorsPolicy {
  if (typeof options !== 'object' || options === null) throw new TypeError('cors(): options must be an object');
  checkKnownKeys('cors()', options, KNOWN);
  const credentials = options.credentials ?? false;
  if (typeof credentials !== 'boolean') throw new TypeError('cors(): credentials must be a boolean');
  const origin = options.origin ?? '*';
  const policy: CorsPolicy = {
    kind: 'fixed',
    fixed: '',
    list: new Set(),
    regexp: null,
    fn: null,
    credentials,
    methods: tokenList('methods', options.methods ?? DEFAULT_METHODS, true),
    headers: options.headers === undefined ? null : tokenList('headers', options.headers, false),
    exposeHeaders:
      options.exposeHeaders === undefined || options.exposeHeaders.length === 0
        ? null
        : tokenList('exposeHeaders', options.exposeHeaders, false),
    maxAge: null,
  };
  if (options.maxAge !== undefined) {
    if (!Number.isInteger(options.maxAge) || options.maxAge < 0)
      throw new TypeError('cors(): maxAge must be a non-negative integer (seconds)');
    policy.maxAge = String(options.maxAge);
  }
  if (origin === '*') {
    // Browsers refuse `*` on credentialed requests; reflecting every origin instead would
    // hand any site the user's session. Make the choice explicit.
    if (credentials)
      throw new TypeError(
        "cors(): origin '*' cannot be combined with credentials: true. List the allowed origins (or pass a function that decides)",
      );
    policy.fixed = '*';
  } else if (typeof origin === 'string') {
    policy.fixed = checkOrigin(origin);
  } else if (Array.isArray(origin)) {
    if (origin.length === 0) throw new TypeError('cors(): origin list is empty');
    for (const o of origin) {
      if (o === '*') throw new TypeError("cors(): '*' cannot be part of an origin list");
      checkOrigin(o);
    }
    policy.kind = 'list';
    policy.list = new Set(origin as string[]);
  } else if (origin instanceof RegExp) {
    // A global or sticky RegExp keeps lastIndex between test() calls: every other request would fail.
    if (origin.global || origin.sticky) throw new TypeError('cors(): origin RegExp must not have the g or y flag');
    policy.kind = 'regexp';
    policy.regexp = origin;
  } else if (typeof origin === 'function') {
    policy.kind = 'function';
    policy.fn = origin as OriginFn;
  } else {
    throw new TypeError("cors(): origin must be '*', an origin string, a list of them, a RegExp or a function");
  }
  return policy;
}

function checkOrigin(origin: unknown): string {
  if (typeof origin !== 'string' || origin === '' || /[\s,\0]/.test(origin)) {
    throw new TypeError(`cors(): invalid origin ${JSON.stringify(origin)} (expected e.g. "https://example.com")`);
  }
  if (origin !== 'null' && !/^[a-z][a-z0-9+.-]*:\/\/[^/]+$/i.test(origin)) {
    throw new TypeError(`cors(): origin ${JSON.stringify(origin)} must be scheme://host[:port] with no path or trailing slash`);
  }
  return origin;
}

function tokenList(name: string, list: readonly string[], upper: boolean): string {
  if (!Array.isArray(list)) throw new TypeError(`cors(): ${name} must be an array of strings`);
  for (const item of list) {
    if (typeof item !== 'string' || !TOKEN.test(item)) throw new TypeError(`cors(): invalid entry ${JSON.stringify(item)} in ${name}`);
  }
  return (upper ? list.map((m) => m.toUpperCase()) : list).join(', ');
}
