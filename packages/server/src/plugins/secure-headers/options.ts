// secureHeaders() options → the header lines to send, computed once at setup. Each header is
// `true` (the default value), `false` (not sent) or a string (sent as given); the CSP is
// built from directives. Mistakes throw TypeErrors at setup.
import { checkKnownKeys } from '../../core/options-check.ts';
import { prepareHeaders, type PreparedHeaders } from '../../http/io/prepared-headers.ts';

export interface ContentSecurityPolicyOptions {
  /** `{ defaultSrc: ["'self'"], imgSrc: ["'self'", 'data:'], upgradeInsecureRequests: true }`; camelCase or kebab-case names. */
  directives: Record<string, readonly string[] | string | boolean>;
  /** Send Content-Security-Policy-Report-Only instead (observe before enforcing). */
  reportOnly?: boolean;
}

export interface SecureHeadersOptions {
  /** Off unless given: a CSP has to fit the app. */
  contentSecurityPolicy?: ContentSecurityPolicyOptions | false;
  /** `max-age=15552000; includeSubDomains`, sent only on requests that came over TLS (req.protocol 'https'). */
  strictTransportSecurity?: boolean | string;
  /** `nosniff` */
  xContentTypeOptions?: boolean | string;
  /** `SAMEORIGIN` */
  xFrameOptions?: boolean | string;
  /** `no-referrer` */
  referrerPolicy?: boolean | string;
  /** `same-origin` */
  crossOriginOpenerPolicy?: boolean | string;
  /** `same-origin` */
  crossOriginResourcePolicy?: boolean | string;
  /** Off by default (`require-corp` breaks most cross-origin embeds); `true` sends `require-corp`. */
  crossOriginEmbedderPolicy?: boolean | string;
  /** `off` */
  xDnsPrefetchControl?: boolean | string;
  /** `none` */
  xPermittedCrossDomainPolicies?: boolean | string;
  /** `?1` */
  originAgentCluster?: boolean | string;
}

/** [option, header name, default value, on unless disabled]. */
const TABLE: readonly (readonly [keyof SecureHeadersOptions, string, string, boolean])[] = [
  ['xContentTypeOptions', 'x-content-type-options', 'nosniff', true],
  ['xFrameOptions', 'x-frame-options', 'SAMEORIGIN', true],
  ['referrerPolicy', 'referrer-policy', 'no-referrer', true],
  ['crossOriginOpenerPolicy', 'cross-origin-opener-policy', 'same-origin', true],
  ['crossOriginResourcePolicy', 'cross-origin-resource-policy', 'same-origin', true],
  ['crossOriginEmbedderPolicy', 'cross-origin-embedder-policy', 'require-corp', false],
  ['xDnsPrefetchControl', 'x-dns-prefetch-control', 'off', true],
  ['xPermittedCrossDomainPolicies', 'x-permitted-cross-domain-policies', 'none', true],
  ['originAgentCluster', 'origin-agent-cluster', '?1', true],
];
const HSTS_DEFAULT = 'max-age=15552000; includeSubDomains';
const KNOWN = new Set<string>([...TABLE.map((t) => t[0]), 'contentSecurityPolicy', 'strictTransportSecurity']);
const BAD_VALUE = /[\r\n\0]/;

/** The headers for plain HTTP, and with HSTS for TLS (null: no HSTS, the plain set everywhere). */
export interface HeaderLists {
  plain: PreparedHeaders;
  tls: PreparedHeaders | null;
}

export function resolveSecureHeaders(options: SecureHeadersOptions): HeaderLists {
  if (typeof options !== 'object' || options === null) throw new TypeError('secureHeaders(): options must be an object');
  checkKnownKeys('secureHeaders()', options, KNOWN);
  const plain: Record<string, string> = {};
  for (const [option, name, fallback, onByDefault] of TABLE) {
    const value = headerValue(option, options[option] as boolean | string | undefined, fallback, onByDefault);
    if (value !== null) plain[name] = value;
  }
  const csp = options.contentSecurityPolicy;
  if (csp !== undefined && csp !== false) {
    if (typeof csp !== 'object' || csp === null || typeof csp.directives !== 'object' || csp.directives === null) {
      throw new TypeError('secureHeaders(): contentSecurityPolicy must be false or { directives: { … } }');
    }
    checkKnownKeys('secureHeaders(): contentSecurityPolicy', csp, ['directives', 'reportOnly']);
    plain[csp.reportOnly === true ? 'content-security-policy-report-only' : 'content-security-policy'] = buildCsp(csp.directives);
  }
  const hsts = headerValue('strictTransportSecurity', options.strictTransportSecurity, HSTS_DEFAULT, true);
  return { plain: prepareHeaders(plain), tls: hsts === null ? null : prepareHeaders({ ...plain, 'strict-transport-security': hsts }) };
}

function headerValue(option: string, given: boolean | string | undefined, fallback: string, onByDefault: boolean): string | null {
  if (given === undefined) return onByDefault ? fallback : null;
  if (given === true) return fallback;
  if (given === false) return null;
  if (typeof given !== 'string' || given.trim() === '' || BAD_VALUE.test(given)) {
    throw new TypeError(`secureHeaders(): ${option} must be true, false or a non-empty header value without CR/LF`);
  }
  return given;
}

function buildCsp(directives: ContentSecurityPolicyOptions['directives']): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(directives)) {
    const name = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    if (!/^[a-z][a-z-]*$/.test(name)) throw new TypeError(`secureHeaders(): invalid CSP directive name "${key}"`);
    if (value === false) continue;
    if (value === true) {
      parts.push(name); // valueless directives, e.g. upgrade-insecure-requests
      continue;
    }
    const sources = typeof value === 'string' ? [value] : value;
    if (!Array.isArray(sources))
      throw new TypeError(`secureHeaders(): CSP directive "${key}" must be a string, a list of strings or a boolean`);
    for (const s of sources) {
      if (typeof s !== 'string' || s === '' || /[;,\r\n\0]/.test(s))
        throw new TypeError(`secureHeaders(): invalid source ${JSON.stringify(s)} in CSP directive "${key}"`);
    }
    parts.push(sources.length === 0 ? name : `${name} ${sources.join(' ')}`);
  }
  if (parts.length === 0) throw new TypeError('secureHeaders(): contentSecurityPolicy.directives is empty');
  return parts.join('; ');
}
