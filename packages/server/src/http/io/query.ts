import { dict } from '../../core/dict.ts';
import { HttpError } from '../errors.ts';

export type QueryValue = string | string[];
/** A prototype-free dictionary: `__proto__` and `constructor` are ordinary keys here. */
export type QueryRecord = Record<string, QueryValue>;

/** Decodes one URL component; malformed percent-encoding is a client error (400). */
export function decodeComponent(raw: string, plusIsSpace: boolean): string {
  let s = raw;
  if (plusIsSpace && s.includes('+')) s = s.replaceAll('+', ' ');
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    throw new HttpError(400, 'Malformed percent-encoding in URL');
  }
}

/**
 * Parses `a=1&b=2&a=3` (query strings and urlencoded bodies). Repeated keys become arrays.
 * The result has no prototype, so no key can reach Object.prototype.
 */
export function parseQuery(input: string | undefined): QueryRecord {
  const out: QueryRecord = dict();
  if (!input) return out;
  let start = 0;
  const len = input.length;
  while (start <= len) {
    let end = input.indexOf('&', start);
    if (end === -1) end = len;
    if (end > start) {
      const eq = input.indexOf('=', start);
      const hasValue = eq !== -1 && eq < end;
      const key = decodeComponent(input.slice(start, hasValue ? eq : end), true);
      const value = hasValue ? decodeComponent(input.slice(eq + 1, end), true) : '';
      const prev = out[key];
      if (prev === undefined) out[key] = value;
      else if (typeof prev === 'string') out[key] = [prev, value];
      else prev.push(value);
    }
    start = end + 1;
  }
  return out;
}
