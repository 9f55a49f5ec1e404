// All headers of a uWS request, copied once as a flat list [name, value, name, value, …]
// (lower-case names, in arrival order). A list, not a record: filling a prototype-free
// record stores each name as a key, which makes V8 look the fresh name string up in its
// string table (internalization) and grow a dictionary, per header; pushes onto an array do
// neither. The record that `req.headers` returns is built from the list only when read.
// Used by the framing guard (requests with a body) and by the request's snapshot.
import { dict } from '../../core/dict.ts';
import type { UwsRequest } from '../../uws/index.ts';

// forEach runs its callback synchronously: one module-level callback and a slot for the
// list being filled, instead of a closure per request. The slot is emptied afterwards so
// that it never keeps the last request's headers alive.
const NONE: string[] = [];
let filling: string[] = NONE;
function addHeader(key: string, value: string): void {
  filling.push(key, value);
}

/** The request's headers as [name, value, …]. */
export function collectHeaderList(uws: UwsRequest): string[] {
  const out = (filling = []);
  uws.forEach(addHeader);
  filling = NONE;
  return out;
}

/** A repeated header's values as one: joined with ", " (Cookie with "; ", RFC 6265 5.4). */
function joinHeader(key: string, prev: string | undefined, value: string): string {
  return prev === undefined ? value : `${prev}${key === 'cookie' ? '; ' : ', '}${value}`;
}

/** One header of a list (`key` in lower case): repeated headers joined with ", " (Cookie with "; "), undefined when absent. */
export function headerIn(list: readonly string[], key: string): string | undefined {
  let out: string | undefined;
  for (let i = 0; i < list.length; i += 2) {
    if (list[i] !== key) continue;
    out = joinHeader(key, out, list[i + 1]!);
  }
  return out;
}

/** The list as one prototype-free record: repeated headers joined with ", " (Cookie with "; "). */
export function headerRecord(list: readonly string[]): Record<string, string> {
  const out = dict<string>();
  for (let i = 0; i < list.length; i += 2) {
    const key = list[i]!;
    out[key] = joinHeader(key, out[key], list[i + 1]!);
  }
  return out;
}

/** All headers of a uWS request as one record (the list, folded). */
export function collectHeaders(uws: UwsRequest): Record<string, string> {
  return headerRecord(collectHeaderList(uws));
}
