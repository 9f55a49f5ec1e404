// Conditional and range requests (RFC 9110 §13 and §14): If-None-Match, If-Modified-Since,
// If-Range and a single `bytes=` Range, decided against an entry's precomputed validators.
import type { Request } from '../../http/io/request.ts';
import type { Entry, Variant } from './entry.ts';

export const FULL = 0;
export const NOT_MODIFIED = 1;
export const PARTIAL = 2;
export const UNSATISFIABLE = 3;

/**
 * The byte range of the last PARTIAL decision, inclusive. One shared slot instead of an
 * object per request: it is read right after `decide` returns, before anything can await.
 */
export const range = { start: 0, end: 0 };

const RANGE_IGNORE = 0;
const RANGE_OK = 1;
const RANGE_UNSATISFIABLE = 2;
const RANGE_SPEC = /^\s*(\d*)\s*-\s*(\d*)\s*$/;

/**
 * What to answer: FULL or NOT_MODIFIED with `v` (the negotiated variant), PARTIAL (the
 * identity bytes `range.start..range.end`) or UNSATISFIABLE (416).
 */
export function decide(e: Entry, v: Variant, req: Request<any>): number {
  const inm = req.header('if-none-match');
  if (inm !== undefined) {
    if (etagMatches(inm, v.etag)) return NOT_MODIFIED;
  } else if (e.lastModified !== undefined) {
    const ims = req.header('if-modified-since');
    if (ims !== undefined && notModifiedSince(ims, e)) return NOT_MODIFIED;
  }
  const header = req.header('range');
  if (header === undefined) return FULL;
  const ifRange = req.header('if-range');
  if (ifRange !== undefined && !ifRangeMatches(ifRange, e)) return FULL;
  const r = parseRange(header, e.size);
  return r === RANGE_OK ? PARTIAL : r === RANGE_UNSATISFIABLE ? UNSATISFIABLE : FULL;
}

/** If-None-Match: `*`, or any listed tag equal to ours under weak comparison. */
function etagMatches(header: string, etag: string | undefined): boolean {
  if (header === etag) return true;
  if (header.trim() === '*') return true;
  if (etag === undefined) return false;
  for (const part of header.split(',')) {
    let t = part.trim();
    if (t.startsWith('W/')) t = t.slice(2);
    if (t === etag) return true;
  }
  return false;
}

function notModifiedSince(header: string, e: Entry): boolean {
  if (header === e.lastModified) return true;
  const t = Date.parse(header);
  return !Number.isNaN(t) && e.mtimeSec <= t;
}

/** If-Range: a strong match of the identity ETag, or exactly the Last-Modified date. */
function ifRangeMatches(header: string, e: Entry): boolean {
  const h = header.trim();
  if (h.startsWith('"')) return h === e.identity.etag;
  if (h.startsWith('W/') || e.lastModified === undefined) return false;
  if (h === e.lastModified) return true;
  const t = Date.parse(h);
  return !Number.isNaN(t) && t === e.mtimeSec;
}

/**
 * One `bytes=` range, written to `range` when RANGE_OK. Multiple ranges and malformed
 * headers are ignored (the full file is sent with 200), as RFC 9110 allows.
 */
function parseRange(header: string, size: number): number {
  if (header.length < 7 || header.slice(0, 6).toLowerCase() !== 'bytes=') return RANGE_IGNORE;
  const spec = header.slice(6);
  if (spec.includes(',')) return RANGE_IGNORE;
  const m = RANGE_SPEC.exec(spec);
  if (m === null) return RANGE_IGNORE;
  const a = m[1]!;
  const b = m[2]!;
  if (a === '') {
    if (b === '') return RANGE_IGNORE;
    const n = Number(b);
    if (n === 0 || size === 0) return RANGE_UNSATISFIABLE;
    range.start = Math.max(0, size - n);
    range.end = size - 1;
    return RANGE_OK;
  }
  const start = Number(a);
  if (b !== '' && Number(b) < start) return RANGE_IGNORE;
  if (start >= size) return RANGE_UNSATISFIABLE;
  range.start = start;
  range.end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  return RANGE_OK;
}
