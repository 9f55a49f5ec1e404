// A set of response headers checked once (names, values, framing headers) so that a
// middleware can send them on every request without checking them again: see
// `prepareHeaders()` and `res.setHeaders()` (docs/response.md).
import { checkHeaderName, checkHeaderValue } from './header-checks.ts';

const encoder = new TextEncoder();

export type HeaderRecord = Readonly<Record<string, string | number | readonly string[]>>;

/** Headers validated once by `prepareHeaders()`, for `res.setHeaders()`. Immutable. */
export class PreparedHeaders {
  /** `[name, value, name, value, …]`: lower-case names, in the order given; an array value gives one line per item. */
  readonly lines: readonly string[];
  /** The distinct lower-case names. */
  readonly names: readonly string[];
  /**
   * The same lines in an array that is not frozen, for res.setHeaders() to copy: V8 copies a
   * frozen array element by element through its slow path (`slice()` of the 14 lines of
   * secureHeaders cost about 11,000 instructions per request; a plain array, a memcpy).
   * Never handed out. @internal
   */
  readonly _lines: string[];
  /**
   * `_lines` as UTF-8 bytes, one ArrayBuffer per name and per value, made once: what
   * res.setHeaders() hands uWS while the response's headers are still exactly this set. A
   * string argument costs the addon a UTF-8 copy per call (Utf8Length, WriteUtf8, a heap
   * buffer); the static file scenario's 13 strings were a quarter of raw uWS's own
   * instructions per request (bench/README.md). @internal
   */
  readonly _wire: readonly ArrayBuffer[];

  constructor(headers: HeaderRecord) {
    if (typeof headers !== 'object' || headers === null || Array.isArray(headers))
      throw new TypeError('prepareHeaders(): expected an object of header names and values');
    const lines: string[] = [];
    const names: string[] = [];
    for (const name of Object.keys(headers)) {
      const key = checkHeaderName(name);
      // uWS writes Content-Length and Transfer-Encoding itself: a second one would corrupt
      // the response (res.header() ignores them; a prepared set refuses them up front).
      if (key === 'content-length' || key === 'transfer-encoding')
        throw new TypeError(`prepareHeaders(): ${name} is set by the server from the body, not by headers`);
      if (names.includes(key)) throw new TypeError(`prepareHeaders(): header ${name} given twice (use an array value for several lines)`);
      names.push(key);
      const value = headers[name];
      const values = Array.isArray(value) ? (value as readonly unknown[]) : [value];
      if (values.length === 0) throw new TypeError(`prepareHeaders(): header ${name} has an empty list of values`);
      for (const v of values) {
        if (typeof v === 'number' && Number.isFinite(v)) lines.push(key, String(v));
        else if (typeof v === 'string') lines.push(key, checkHeaderValue(key, v));
        else throw new TypeError(`prepareHeaders(): header ${name} must be a string, a finite number or a list of strings`);
      }
    }
    this._lines = lines;
    this._wire = Object.freeze(lines.map((line) => encoder.encode(line).buffer as ArrayBuffer));
    this.lines = Object.freeze(lines.slice());
    this.names = Object.freeze(names);
    Object.freeze(this);
  }
}

/**
 * Checks a set of response headers once, at startup:
 * `const security = prepareHeaders({ 'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff' })`,
 * then `res.setHeaders(security)` per request. Throws a TypeError for an invalid name, a value
 * with CR, LF or NUL, Content-Length/Transfer-Encoding, or a name given twice.
 */
export function prepareHeaders(headers: HeaderRecord): PreparedHeaders {
  return new PreparedHeaders(headers);
}
