// All headers of a uWS request as one prototype-free record: lower-case names, repeated
// headers joined with ", " (Cookie with "; "). Used by the request's snapshot and by the
// framing guard, which collects them once for requests with a body.
import { dict } from '../../core/dict.ts';
import type { UwsRequest } from '../../uws/index.ts';

// forEach runs its callback synchronously: one module-level callback and a slot for the
// record being filled, instead of a closure per request. The slot is emptied afterwards so
// that it never keeps the last request's headers alive.
const NONE: Record<string, string> = dict();
let filling: Record<string, string> = NONE;
function addHeader(key: string, value: string): void {
  const prev = filling[key];
  filling[key] = prev === undefined ? value : `${prev}${key === 'cookie' ? '; ' : ', '}${value}`;
}

export function collectHeaders(uws: UwsRequest): Record<string, string> {
  const out = (filling = dict<string>());
  uws.forEach(addHeader);
  filling = NONE;
  return out;
}
