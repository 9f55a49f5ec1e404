// http/serializer.ts, `serialize: 'compiled'` (fast-json-stringify behind a route's reply
// schemas): whatever the handler returns, the compiled function either throws an Error (the
// route then answers 500, as for any handler error) or writes text that JSON.parse reads; for
// a value its schema accepts, it writes exactly what JSON.stringify writes of the
// schema's own parse of it (every string escaped the same way, undeclared keys left out),
// and each status picks the schema that reply checks pick (exact code, its class, default).
import { z } from 'zod';
import { compileSerializer } from '../../packages/server/src/http/serializer.ts';
import { assert, onlyDocumented, timed } from '../lib.mjs';

const Item = z.object({ id: z.number(), name: z.string(), tags: z.array(z.string()), note: z.string().optional() });
const Page = z.object({ items: z.array(Item), total: z.number().int(), next: z.string().nullable() });
const Problem = z.object({ error: z.string(), detail: z.record(z.string(), z.string()).optional() });
const SCHEMAS = { 200: Page, '4XX': Problem, default: z.object({ text: z.string() }) };
const stringify = compileSerializer('GET /fuzz', SCHEMAS);
/** The schema each status must use, as compileSerializer resolves it. */
const schemaFor = (status) => (status === 200 ? Page : status >= 400 && status < 500 ? Problem : SCHEMAS.default);
const STATUSES = [200, 201, 404, 422, 500];

/** The input as a handler's return value: JSON when it parses, else shapes built from its text. */
function returnedValue(text) {
  try {
    return JSON.parse(text);
  } catch {
    const parts = text.split('\u0000');
    const item = { id: parts.length, name: parts[0] ?? '', tags: parts.slice(1), extra: text };
    return { items: [item], total: parts.length, next: parts[1] ?? null, error: text, detail: { [text]: text }, text };
  }
}

export function fuzz(data) {
  const value = returnedValue(data.toString('utf8'));
  for (const status of STATUSES) {
    let out;
    try {
      out = timed('compiled stringify', () => stringify(value, status));
    } catch (err) {
      onlyDocumented(err, [Error]);
      continue;
    }
    assert(typeof out === 'string', 'the serializer writes a string');
    let back;
    try {
      back = JSON.parse(out);
    } catch {
      assert(false, `status ${status}: the output is not JSON: ${out.slice(0, 200)}`);
    }
    const parsed = schemaFor(status).safeParse(value);
    // Zod's record drops an own `__proto__` key; the serializer, like JSON.stringify, writes it
    // (an own property of the returned value, harmless in a reply): no oracle for that case.
    if (parsed.success && !out.includes('"__proto__"')) {
      const expected = JSON.stringify(parsed.data);
      assert(
        JSON.stringify(back) === expected,
        `status ${status}: a valid reply came back changed: ${out.slice(0, 200)} vs ${expected.slice(0, 200)}`,
      );
    }
  }
}
