// The headers of a light Response (web-response.ts) given as a plain record, kept as checked
// lines instead of an undici Headers. `new Headers(record)` converts every key and value
// through webidl, validates, lower-cases and stores them, and the sender then iterates them
// back out sorted: for the two or three headers a handler sets, that was the largest share of
// what a light Response still cost. Lines are made only where the result is certain to be
// the one undici's Headers would hold: string keys that are HTTP tokens (upper-case letters
// lower-cased), no two alike once lower-cased (undici joins those with ", "), string values
// that are Latin-1 with no NUL, CR or LF and no space or tab at either end (undici trims
// those). Anything else gets undici's Headers, with its own conversion and errors.
import { headerKey } from '../http/io/header-checks.ts';

/**
 * A value undici's Headers keep exactly as given: a ByteString (no code unit above 0xFF),
 * no NUL, CR or LF, no space or tab at either end (undici trims those). A loop, not a
 * regular expression: values are short, and entering the regexp engine costs more than
 * scanning them.
 */
function plainValue(value: string): boolean {
  const n = value.length;
  if (n === 0) return true;
  const first = value.charCodeAt(0);
  const last = value.charCodeAt(n - 1);
  if (first === 0x20 || first === 0x09 || last === 0x20 || last === 0x09) return false;
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    if (c > 0xff || c === 0x00 || c === 0x0a || c === 0x0d) return false;
  }
  return true;
}

const WebHeaders = globalThis.Headers;

/** Flat `[name, value, …]`: names lower-case, each once, sorted as undici's Headers iterate them. Never changed once made. */
export type HeaderLines = readonly string[];

/**
 * The lines of `record` plus `content-type: defaultType` when it has none (undici's Response
 * adds that for a string body), or undefined where undici's Headers must convert the record.
 */
export function headerLines(record: object, defaultType: string | undefined): HeaderLines | undefined {
  // undici reads every own key, non-enumerable ones included; a symbol key throws there, so a
  // record with one is left to undici. Two calls, not Reflect.ownKeys(), which collects the
  // keys in the runtime every time: about 1,800 instructions per request for a two-header
  // record with what it called (bench/instructions.mjs --annotate --inclusive); timed
  // in-process on that record, 333 ns against about 90 ns for these two together.
  const keys = Object.getOwnPropertyNames(record);
  if (Object.getOwnPropertySymbols(record).length > 0) return undefined;
  const lines: string[] = [];
  let sorted = true;
  let previous = '';
  let hasType = false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const name = headerKey(key);
    if (name === undefined) return undefined;
    const value = (record as Record<string, unknown>)[key];
    if (typeof value !== 'string' || !plainValue(value)) return undefined;
    if (name <= previous) sorted = false;
    if (name === 'content-type') hasType = true;
    previous = name;
    lines.push(name, value);
  }
  if (defaultType !== undefined && !hasType) {
    if ('content-type' <= previous) sorted = false;
    lines.push('content-type', defaultType);
  }
  return sorted ? lines : sortLines(lines);
}

/** Sorted by name (UTF-16 code units, as undici compares them); undefined when two names are the same. */
function sortLines(lines: string[]): HeaderLines | undefined {
  const pairs: [string, string][] = [];
  for (let i = 0; i < lines.length; i += 2) pairs.push([lines[i]!, lines[i + 1]!]);
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const out: string[] = [];
  for (let i = 0; i < pairs.length; i++) {
    if (i > 0 && pairs[i]![0] === pairs[i - 1]![0]) return undefined;
    out.push(pairs[i]![0], pairs[i]![1]);
  }
  return out;
}

/** undici's Headers holding `lines`, for code that reads or changes a light Response's `headers`. */
export function headersOf(lines: HeaderLines): Headers {
  const headers = new WebHeaders();
  for (let i = 0; i < lines.length; i += 2) headers.append(lines[i]!, lines[i + 1]!);
  return headers;
}
