// RFC 6265 cookies: parsing, serializing and HMAC-SHA256 signing with secret rotation.
import { dict } from '../../core/dict.ts';
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface CookieOptions {
  maxAge?: number; // seconds
  expires?: Date;
  path?: string;
  domain?: string;
  secure?: boolean;
  httpOnly?: boolean;
  sameSite?: 'strict' | 'lax' | 'none' | 'Strict' | 'Lax' | 'None';
  partitioned?: boolean;
  priority?: 'low' | 'medium' | 'high';
  /** Sign the value with the app's first cookie secret. */
  signed?: boolean;
  /** Encode the value; defaults to encodeURIComponent. */
  encode?: (value: string) => string;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const COOKIE_VALUE = /^[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*$/;
const ATTRIBUTE_VALUE = /^[\x20-\x3A\x3C-\x7E]*$/;

/** Parses a Cookie header into a prototype-free record. First occurrence of a name wins. */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = dict();
  if (!header) return out;
  let start = 0;
  const len = header.length;
  while (start < len) {
    let end = header.indexOf(';', start);
    if (end === -1) end = len;
    const eq = header.indexOf('=', start);
    if (eq !== -1 && eq < end) {
      const name = header.slice(start, eq).trim();
      if (name && !(name in out)) {
        let value = header.slice(eq + 1, end).trim();
        if (value.length > 1 && value.charCodeAt(0) === 34 && value.charCodeAt(value.length - 1) === 34) value = value.slice(1, -1);
        out[name] = safeDecode(value);
      }
    }
    start = end + 1;
  }
  return out;
}

function safeDecode(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

export function serializeCookie(name: string, value: string, options: CookieOptions = {}): string {
  if (!TOKEN.test(name)) throw new TypeError(`Invalid cookie name: ${JSON.stringify(name)}`);
  const encoded = (options.encode ?? encodeURIComponent)(value);
  if (!COOKIE_VALUE.test(encoded)) throw new TypeError(`Invalid cookie value for ${name}`);
  let out = `${name}=${encoded}`;
  // Every option is checked, not just written: a value from user input (a priority, a
  // sameSite) could otherwise carry "; Domain=evil.example" into the header.
  if (options.maxAge !== undefined) {
    if (typeof options.maxAge !== 'number' || !Number.isFinite(options.maxAge))
      throw new TypeError('cookie maxAge must be a finite number of seconds');
    out += `; Max-Age=${Math.floor(options.maxAge)}`;
  }
  if (options.domain !== undefined) out += `; Domain=${attribute('domain', options.domain)}`;
  if (options.path !== undefined) out += `; Path=${attribute('path', options.path)}`;
  if (options.expires !== undefined) {
    if (!(options.expires instanceof Date) || Number.isNaN(options.expires.getTime()))
      throw new TypeError('cookie expires must be a valid Date');
    out += `; Expires=${options.expires.toUTCString()}`;
  }
  if (flag('httpOnly', options.httpOnly)) out += '; HttpOnly';
  if (flag('secure', options.secure)) out += '; Secure';
  if (flag('partitioned', options.partitioned)) out += '; Partitioned';
  if (options.priority !== undefined) out += `; Priority=${oneOf('priority', options.priority, PRIORITIES)}`;
  if (options.sameSite !== undefined) out += `; SameSite=${oneOf('sameSite', options.sameSite, SAME_SITES)}`;
  return out;
}

const PRIORITIES: Record<string, string> = { low: 'Low', medium: 'Medium', high: 'High' };
const SAME_SITES: Record<string, string> = { strict: 'Strict', lax: 'Lax', none: 'None' };

function oneOf(name: string, value: unknown, allowed: Record<string, string>): string {
  const written = typeof value === 'string' ? allowed[value.toLowerCase()] : undefined;
  if (written === undefined || !Object.hasOwn(allowed, (value as string).toLowerCase())) {
    throw new TypeError(`Invalid cookie ${name}: ${JSON.stringify(value)} (expected ${Object.keys(allowed).join(', ')})`);
  }
  return written;
}

function flag(name: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new TypeError(`cookie ${name} must be a boolean`);
  return value;
}

function attribute(name: string, value: string): string {
  if (typeof value !== 'string' || !ATTRIBUTE_VALUE.test(value)) throw new TypeError(`Invalid cookie ${name}: ${JSON.stringify(value)}`);
  return value;
}

function mac(value: string, secret: string): string {
  return createHmac('sha256', secret).update(value).digest('base64url');
}

/** `value.signature`, signed with the first (current) secret. */
export function signCookieValue(value: string, secret: string): string {
  return `${value}.${mac(value, secret)}`;
}

/** Returns the original value if any secret verifies the signature, else undefined. */
export function unsignCookieValue(signed: string, secrets: readonly string[]): string | undefined {
  const dot = signed.lastIndexOf('.');
  if (dot < 0) return undefined;
  const value = signed.slice(0, dot);
  const given = Buffer.from(signed.slice(dot + 1));
  for (const secret of secrets) {
    const expected = Buffer.from(mac(value, secret));
    if (expected.length === given.length && timingSafeEqual(expected, given)) return value;
  }
  return undefined;
}
