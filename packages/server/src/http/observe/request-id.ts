// Request ids (docs/logging.md): `req.id`, in the response header and on every log line of the
// request. Taken from the incoming header when it is trusted and well-formed, else generated:
// a random per-process prefix and a counter (unique across processes with overwhelming
// probability, a few tens of ns, no crypto per request).
import { randomBytes } from 'node:crypto';
import { checkKnownKeys } from '../../core/options-check.ts';
import type { RequestIdConfig } from '../../core/settings.ts';

export interface RequestIdOptions {
  /** The header read (when trusted) and set on every response. Default `x-request-id`. */
  header?: string;
  /**
   * Take the id from the incoming header. Default: when the app trusts a proxy (`trustProxy`
   * is not false), since only a proxy you run should be allowed to choose ids.
   */
  trustHeader?: boolean;
  /** Makes an id when none is taken from the request. Default: `<8 random chars>-<counter>`. */
  generate?: () => string;
}

const PREFIX = randomBytes(6).toString('base64url');
let sequence = 0;

/** `<random prefix>-<counter in base 36>`, e.g. `q3ZkT0aB-1a2b`. */
export function generateRequestId(): string {
  return `${PREFIX}-${(++sequence).toString(36)}`;
}

/** An incoming id must be printable ASCII without spaces, 1–200 characters: it goes into logs and a response header. */
const WELL_FORMED = /^[\x21-\x7e]{1,200}$/;

export function isWellFormedRequestId(value: string | undefined): value is string {
  return value !== undefined && WELL_FORMED.test(value);
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
const KNOWN = new Set(['header', 'trustHeader', 'generate']);

export function resolveRequestId(option: boolean | RequestIdOptions | undefined): RequestIdConfig | null {
  if (option === undefined || option === false) return null;
  if (option === true) return { header: 'x-request-id', trustHeader: undefined, generate: generateRequestId };
  if (typeof option !== 'object' || option === null)
    throw new TypeError('requestId must be a boolean or { header, trustHeader, generate }');
  checkKnownKeys('requestId', option, KNOWN);
  const header = (option.header ?? 'x-request-id').toLowerCase();
  if (typeof option.header !== 'undefined' && (typeof option.header !== 'string' || !HEADER_NAME.test(header)))
    throw new TypeError('requestId.header must be a valid header name');
  if (option.trustHeader !== undefined && typeof option.trustHeader !== 'boolean')
    throw new TypeError('requestId.trustHeader must be a boolean');
  if (option.generate !== undefined && typeof option.generate !== 'function')
    throw new TypeError('requestId.generate must be a function returning a string');
  return { header, trustHeader: option.trustHeader, generate: option.generate ?? generateRequestId };
}
