// http/io/header-checks.ts and http/framing.ts: a header name or value is accepted as is or
// refused with a TypeError (never one carrying CR, LF or NUL through); the framing guard
// answers null or a reason for any pair of Content-Length / Transfer-Encoding values, and
// accepts only a plain number or "chunked", never both.
import { checkHeaderName, checkHeaderValue, listHasToken, lowerCaseKey } from '../../packages/server/src/http/io/header-checks.ts';
import { framingProblemIn } from '../../packages/server/src/http/framing.ts';
import { assert, onlyDocumented, timed } from '../lib.mjs';

export function fuzz(data) {
  const text = data.toString('latin1');
  const parts = text.split('\n');
  const name = parts[0] ?? '';
  const value = parts[1] ?? '';
  try {
    const n = timed('checkHeaderName', () => checkHeaderName(name));
    assert(/^[!#$%&'*+\-.^_`|~0-9a-z]+$/.test(n), `a checked name is a lower-case token: ${JSON.stringify(n)}`);
    assert(lowerCaseKey(name) === name.toLowerCase(), 'lowerCaseKey lower-cases');
  } catch (err) {
    onlyDocumented(err, [TypeError]);
  }
  try {
    const v = timed('checkHeaderValue', () => checkHeaderValue('x-fuzz', value));
    assert(!/[\r\n\0]/.test(v), 'no CR, LF or NUL in an accepted value');
  } catch (err) {
    onlyDocumented(err, [TypeError]);
  }
  assert(typeof timed('listHasToken', () => listHasToken(value, name)) === 'boolean', 'listHasToken answers a boolean');

  // The guard reads a request's headers as a flat list [name, value, ...] (http/io/request-headers.ts).
  const cl = data.length > 0 && data[0] & 1 ? name : undefined;
  const te = data.length > 0 && data[0] & 2 ? value : undefined;
  const list = [];
  if (cl !== undefined) list.push('content-length', cl);
  if (te !== undefined) list.push('transfer-encoding', te);
  const problem = timed('framingProblemIn', () => framingProblemIn(list));
  if (problem === null) {
    assert(cl === undefined || te === undefined, 'never both');
    assert(cl === undefined || /^\d+$/.test(cl), `an accepted Content-Length is digits: ${JSON.stringify(cl)}`);
    assert(te === undefined || te.toLowerCase() === 'chunked', 'an accepted Transfer-Encoding is chunked');
  } else assert(typeof problem === 'string' && problem.length > 0, 'a reason');
}
