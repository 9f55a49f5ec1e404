// The URL of the web Request a fetch handler gets: `<protocol>://<Host header><path>?<query>`,
// or the app's public origin in front of the path. A URL parser would serialise it (lower-case
// host, no default port, dot segments resolved, some characters percent-encoded); the light
// Request (web-request.ts) hands the string out without parsing it, so it only does when
// the string is already what a parser would give back: a known origin and a plain path.
import type { Request } from '../http/io/request.ts';

/** A Host header that is a plain hostname[:port] or [IPv6][:port]; anything else is client input that would reshape the URL. */
const HOST = /^[A-Za-z0-9.\-_~]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

/**
 * Characters a WHATWG URL parser leaves as they are in an http path: unreserved characters,
 * sub-delimiters except `'` (percent-encoded in an http query), `:@/%`. The query also keeps `?`.
 */
const PLAIN = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.~!$&()*+,;=:@%/') PLAIN[c.charCodeAt(0)] = 1;

// Loops, not regular expressions: entering the regexp engine cost about 450 instructions per
// test (bench/instructions.mjs --annotate), more than these scans of a usual path and query.
// The path and the query are scanned as uWS gave them, each a flat string: joined first, the
// scan read a cons string, which V8 flattens (a copy) before the first character.

/**
 * True when a URL parser leaves the path (no query) as it is: plain characters only, and no
 * dot segment (`/.` or `%2e`, which the parser resolves; a `/.` that is not one, as in
 * `/.well-known`, is refused too: the real Request parses those).
 */
function plainPath(path: string): boolean {
  if (path.charCodeAt(0) !== 0x2f) return false;
  for (let i = 1; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c > 0x7f || PLAIN[c] === 0) return false;
    if (c === 0x2e && path.charCodeAt(i - 1) === 0x2f) return false; // `/.`
    if (c === 0x25 && path.charCodeAt(i + 1) === 0x32 && (path.charCodeAt(i + 2) | 0x20) === 0x65) return false; // `%2e`, `%2E`
  }
  return true;
}

/** True when a URL parser leaves the query (without its `?`) as it is: dots and `%2e` are not resolved there, `?` is kept. */
function plainQuery(query: string): boolean {
  for (let i = 0; i < query.length; i++) {
    const c = query.charCodeAt(i);
    if ((c > 0x7f || PLAIN[c] === 0) && c !== 0x3f) return false;
  }
  return true;
}

/** True when `<origin><path>?<query>` (`?<query>` left out when empty) is the URL a parser gives back. Exported for its test. */
export function plainTarget(path: string, query: string): boolean {
  return plainPath(path) && plainQuery(query);
}

/** Origins (`http://Example.com:80`) as a URL parser serialises them (`http://example.com`). */
const origins = new Map<string, string | null>();
/** Host headers are client input: the table is emptied when it fills rather than growing. */
const MAX_ORIGINS = 256;

/** The origin as `new URL()` writes it, or null when it is not a bare origin (a path, credentials, unparsable). */
function normalOrigin(origin: string): string | null {
  let known = origins.get(origin);
  if (known !== undefined) return known;
  known = null;
  try {
    const url = new URL(origin + '/');
    if (url.pathname === '/' && url.search === '' && url.username === '' && url.password === '') known = url.href.slice(0, -1);
  } catch {
    // unparsable: the caller's Request constructor reports it
  }
  if (origins.size >= MAX_ORIGINS) origins.clear();
  origins.set(origin, known);
  return known;
}

export interface WebUrl {
  /** The URL as built: what a Request constructor is given. */
  href: string;
  /** True when `href` is already in the form a URL parser gives back, so it may be used unparsed. */
  normal: boolean;
}

/**
 * The path the handler sees (no query): `stripPrefix` removed when the path is under it (the
 * prefix itself, or the prefix and a `/`), `/` when nothing is left. Compared in place: no
 * `prefix + '/'` string per request.
 */
function handlerPath(path: string, stripPrefix: string): string {
  const n = stripPrefix.length;
  if (n === 0 || !path.startsWith(stripPrefix) || (path.length > n && path.charCodeAt(n) !== 0x2f)) return path;
  return path.length === n ? '/' : path.slice(n);
}

/** Builds the web URL of `req` (call while the handler runs). */
export function webUrl(req: Request, stripPrefix: string, origin: string | undefined): WebUrl {
  const path = handlerPath(req.path, stripPrefix);
  const query = req.rawQuery;
  const target = query === '' ? path : `${path}?${query}`;
  const host = origin === undefined ? hostOrigin(req) : null;
  const base = host === null ? (origin as string) : host.base;
  if (!plainTarget(path, query)) return { href: base + target, normal: false };
  const normal = host === null ? normalOrigin(base) : host.normal;
  return normal === null ? { href: base + target, normal: false } : { href: normal + target, normal: true };
}

/** A protocol and Host header, and the origin they make. */
interface HostOrigin {
  host: string | undefined;
  protocol: string;
  /** `<protocol>://<Host header>` (localhost for a Host header that would reshape the URL). */
  base: string;
  /** `base` as a URL parser serialises it, or null. */
  normal: string | null;
}

// The last protocol and Host header seen, and the origin they made: the requests a process
// serves nearly all carry the same pair, which then costs two string comparisons instead of
// the Host check, a concatenation and a hash lookup of the new string in `origins`. One
// entry, updated in place: no allocation per request.
const last: HostOrigin = { host: undefined, protocol: '', base: '', normal: null };

/** The origin of `req`'s protocol and Host header. */
function hostOrigin(req: Request): HostOrigin {
  const host = req.header('host');
  const protocol = req.protocol;
  if (host !== last.host || protocol !== last.protocol) {
    // A Host header is client input: never let it change the URL's shape.
    last.base = `${protocol}://${host !== undefined && HOST.test(host) ? host : 'localhost'}`;
    last.normal = normalOrigin(last.base);
    last.host = host;
    last.protocol = protocol;
  }
  return last;
}
