// Turns the wildcard part of a request path into a verdict: may it name a file under the
// root? Only paths loaded from inside the root are ever served (see load.ts), so this
// guard decides what a *miss* answers: traversal tricks (`..`, encoded or doubly encoded
// separators, backslashes, absolute and drive-letter paths, NUL bytes) never reach the
// dotfile and SPA-fallback rules; they get a 404 (a 400 for NUL bytes).

export const PATH_OK = 0;
export const PATH_BAD_REQUEST = 400;
export const PATH_NOT_FOUND = 404;

const ENCODED_SEPARATOR = /%(2f|5c)/i;
const DOUBLE_ENCODED = /%(2e|2f|5c|00)/i;
const DRIVE_LETTER = /^[A-Za-z]:/;

/**
 * `p` is the decoded path relative to the static prefix; `rawPath` the request path as
 * sent (still percent-encoded), where encoded separators are visible.
 */
export function checkPath(p: string, rawPath: string): number {
  if (p.includes('\0')) return PATH_BAD_REQUEST;
  if (p.includes('\\') || p.startsWith('/') || DRIVE_LETTER.test(p)) return PATH_NOT_FOUND;
  if (hasEncodedSeparator(rawPath)) return PATH_NOT_FOUND;
  if (p.includes('%') && DOUBLE_ENCODED.test(p)) return PATH_NOT_FOUND;
  const segments = p.split('/');
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    if (s === '..' || s === '.') return PATH_NOT_FOUND;
    if (s === '' && i !== segments.length - 1) return PATH_NOT_FOUND;
  }
  return PATH_OK;
}

/** `%2F` or `%5C` in the raw path: a separator the router did not split on. */
export function hasEncodedSeparator(rawPath: string): boolean {
  return rawPath.includes('%') && ENCODED_SEPARATOR.test(rawPath);
}

/** A segment starting with a dot (`.env`, `.git/config`). */
export function hasDotSegment(p: string): boolean {
  return p.startsWith('.') || p.includes('/.');
}
