// http/io/query.ts: query strings and urlencoded bodies. Only a 400 HttpError may be thrown; the
// result has no Object.prototype in its chain; it holds no more values than the input has
// `&`-separated pieces; decoding never makes a component longer.
import { HttpError } from '../../packages/server/src/http/errors.ts';
import { decodeComponent, parseQuery } from '../../packages/server/src/http/io/query.ts';
import { assert, onlyDocumented, prototypeFree, timed } from '../lib.mjs';

const is400 = (e) => e.status === 400;

export function fuzz(data) {
  const input = data.toString('utf8');
  let out;
  try {
    out = timed('parseQuery', () => parseQuery(input));
  } catch (err) {
    onlyDocumented(err, [HttpError], is400);
  }
  if (out !== undefined) {
    assert(prototypeFree(out), 'the record has no Object.prototype');
    let values = 0;
    for (const v of Object.values(out)) {
      if (Array.isArray(v)) {
        assert(v.length >= 2 && v.every((x) => typeof x === 'string'), 'arrays of strings only for repeated keys');
        values += v.length;
      } else {
        assert(typeof v === 'string', 'string values');
        values++;
      }
    }
    assert(values <= input.split('&').length, `${values} values from ${input.split('&').length} pieces`);
  }
  let s;
  try {
    s = timed('decodeComponent', () => decodeComponent(input, data.length > 0 && data[0] % 2 === 0));
  } catch (err) {
    onlyDocumented(err, [HttpError], is400);
  }
  if (s !== undefined) assert(s.length <= input.length, 'decoding never grows the text');
}
