// http/io/body.ts parseJson: JSON bodies with the prototype-key checks. Only a 400 HttpError may
// be thrown; an accepted body holds no own `__proto__` key and no `constructor.prototype`, at
// any depth, however the keys were spelt (\u escapes included).
import { HttpError } from '../../packages/server/src/http/errors.ts';
import { bodyKind, parseJson } from '../../packages/server/src/http/io/body.ts';
import { assert, onlyDocumented, timed } from '../lib.mjs';

function assertClean(root) {
  const stack = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (!Array.isArray(v)) {
      assert(!Object.hasOwn(v, '__proto__'), 'an accepted body has no own __proto__');
      const c = Object.hasOwn(v, 'constructor') ? v.constructor : undefined;
      assert(!(typeof c === 'object' && c !== null && Object.hasOwn(c, 'prototype')), 'no constructor.prototype');
    }
    for (const x of Object.values(v)) stack.push(x);
  }
}

export function fuzz(data) {
  try {
    const value = timed('parseJson', () => parseJson(data));
    assertClean(value);
  } catch (err) {
    onlyDocumented(err, [HttpError], (e) => e.status === 400);
  }
  const kind = bodyKind(data.toString('latin1'));
  assert(['json', 'urlencoded', 'multipart', 'text', 'other'].includes(kind), 'bodyKind answers a known kind');
}
