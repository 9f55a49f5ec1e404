// Response header names and values, checked before they reach uWS: a bad name is a bug in
// the app (TypeError), a value with CR/LF/NUL would split the response (refused).
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_HEADER_VALUE = /[\r\n\0]/;

// Apps use a handful of header names: each is validated and lower-cased once, then found here
// by one Map lookup. The common ones are known valid from the start.
const checkedNames = new Map<string, string>();
const COMMON = [
  // Request header names too: Vary lists them.
  'accept',
  'accept-encoding',
  'accept-language',
  'access-control-request-headers',
  'access-control-request-method',
  'authorization',
  'cookie',
  'origin',
  'accept-ranges',
  'access-control-allow-credentials',
  'access-control-allow-headers',
  'access-control-allow-methods',
  'access-control-allow-origin',
  'access-control-expose-headers',
  'access-control-max-age',
  'age',
  'allow',
  'cache-control',
  'content-disposition',
  'content-encoding',
  'content-language',
  'content-location',
  'content-range',
  'content-security-policy',
  'content-type',
  'cross-origin-embedder-policy',
  'cross-origin-opener-policy',
  'cross-origin-resource-policy',
  'etag',
  'expires',
  'last-modified',
  'link',
  'location',
  'origin-agent-cluster',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'referrer-policy',
  'retry-after',
  'server',
  'set-cookie',
  'strict-transport-security',
  'vary',
  'www-authenticate',
  'x-content-type-options',
  'x-dns-prefetch-control',
  'x-frame-options',
  'x-permitted-cross-domain-policies',
  'x-request-id',
];
for (const name of COMMON) checkedNames.set(name, name);
const LIMIT = COMMON.length + 1024;

/**
 * The lower-case key of `name` when it is an HTTP token (RFC 9110 tchar), undefined otherwise:
 * for callers that make their own error (the light Response leaves it to undici's Headers).
 */
export function headerKey(name: string): string | undefined {
  let key = checkedNames.get(name);
  if (key !== undefined) return key;
  if (typeof name !== 'string' || !HEADER_NAME.test(name)) return undefined;
  key = name.toLowerCase();
  if (checkedNames.size < LIMIT) checkedNames.set(name, key);
  return key;
}

/** The lower-case key of a valid header name; TypeError for anything that is not an HTTP token. */
export function checkHeaderName(name: string): string {
  const key = headerKey(name);
  if (key === undefined) throw new TypeError(`Invalid header name: ${JSON.stringify(name)}`);
  return key;
}

export function checkHeaderValue(name: string, value: string): string {
  if (value.length <= SHORT_VALUE ? hasLineBreakOrNul(value) : BAD_HEADER_VALUE.test(value))
    throw new TypeError(`Header ${name} contains CR, LF or NUL: refused (response splitting)`);
  return value;
}

/**
 * Values up to this length are scanned by a loop: most are short (a type, a number, a token),
 * and entering the regexp engine costs more than scanning them (about 450 instructions per
 * test, counted with bench/instructions.mjs; the loop, a few per character). Longer values
 * (policies, cookies, links) go to the regexp, which scans faster per character.
 */
const SHORT_VALUE = 64;

function hasLineBreakOrNul(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x0d || c === 0x0a || c === 0x00) return true;
  }
  return false;
}

/**
 * `name` in lower case. Names are usually written lower-case already: one scan finds no
 * upper-case letter and returns the string itself (String.prototype.toLowerCase allocates a
 * copy before it finds out that nothing changed).
 */
export function lowerCaseKey(name: string): string {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c >= 65 && c <= 90) return name.toLowerCase();
  }
  return name;
}

/**
 * True when the comma-separated `list` (a Vary value) holds `token` (lower case) or `*`,
 * compared case-insensitively, without splitting the list into new strings.
 */
export function listHasToken(list: string, token: string): boolean {
  const n = list.length;
  let i = 0;
  while (i < n) {
    while (i < n && (list.charCodeAt(i) === 32 || list.charCodeAt(i) === 9 || list.charCodeAt(i) === 44)) i++;
    const start = i;
    while (i < n && list.charCodeAt(i) !== 44) i++;
    let end = i;
    while (end > start && (list.charCodeAt(end - 1) === 32 || list.charCodeAt(end - 1) === 9)) end--;
    const len = end - start;
    if (len === 1 && list.charCodeAt(start) === 42) return true;
    if (len === token.length && sameIgnoringCase(list, start, token)) return true;
  }
  return false;
}

/** `list.slice(start, start + token.length)` equals `token` (lower case), ignoring ASCII case. */
function sameIgnoringCase(list: string, start: number, token: string): boolean {
  for (let j = 0; j < token.length; j++) {
    let c = list.charCodeAt(start + j);
    if (c >= 65 && c <= 90) c += 32;
    if (c !== token.charCodeAt(j)) return false;
  }
  return true;
}
