// http/schema-compile.ts compiledSchema: the compiled copy Tachyon validates with must answer
// exactly as the schema's own safeParse, on any input: the same success, the same output (key
// order included) and, for a rejection, the same issues. The input is the bytes as JSON when
// they parse (objects, arrays, numbers at the edges, strings with surrogates), else the text.
// fuzz-instrument: node_modules/zod/
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { compiledSchema, loadSchemaCompiler } from '../../packages/server/src/http/schema-compile.ts';
import { assert, timed } from '../lib.mjs';

await loadSchemaCompiler();

const ROLES = ['reader', 'editor', 'admin'];
const schemas = {
  // the realistic POST's body (bench/servers/shared.mjs)
  user: z.object({
    name: z.string().min(1).max(100),
    email: z.string().regex(/^[^@\s]+@[^@\s]+$/),
    age: z.number().int().min(0).max(150),
    roles: z.array(z.enum(ROLES)).max(10),
    tags: z.array(z.string().min(1).max(32)).max(20),
    bio: z.string().max(2000),
  }),
  // the typing race's keystroke (code points, not UTF-16 units)
  key: z.string().min(1).max(6),
  // optional, nullable, defaults, literals, unions, records, nested arrays, coercion
  mixed: z.object({
    id: z.coerce.number().int().positive(),
    kind: z.union([z.literal('a'), z.literal(2), z.null()]),
    note: z.string().optional(),
    maybe: z.number().nullable(),
    limit: z.number().max(100).default(10),
    flags: z.record(z.string(), z.boolean()),
    grid: z.array(z.array(z.number().finite())).length(2),
    email: z.email().optional(),
  }),
  strict: z.strictObject({ x: z.number(), y: z.number().gte(-1).lt(1) }),
  loose: z.looseObject({ t: z.string().trim().toLowerCase() }),
  tuple: z.tuple([z.string(), z.number()]),
  transformed: z.object({ n: z.string().transform((s) => s.length), b: z.boolean().catch(false) }),
  refined: z.object({ a: z.number(), b: z.number() }).refine((v) => v.a < v.b, { message: 'a < b' }),
  tagged: z.discriminatedUnion('type', [z.object({ type: z.literal('x'), x: z.int() }), z.object({ type: z.literal('y'), y: z.string() })]),
};
const compiled = Object.fromEntries(Object.entries(schemas).map(([k, s]) => [k, compiledSchema(s)]));
assert(compiled.user !== schemas.user, 'the realistic body schema is compiled');

const issues = (r) => (r.success ? null : r.error.issues);

export function fuzz(data) {
  const text = data.toString('utf8');
  let input;
  try {
    input = JSON.parse(text);
  } catch {
    input = text;
  }
  for (const name of Object.keys(schemas)) {
    const want = schemas[name].safeParse(input);
    const got = timed(`compiled ${name}`, () => compiled[name].safeParse(input));
    assert(got.success === want.success, `${name}: success ${got.success}, safeParse says ${want.success}`);
    if (want.success) {
      assert(isDeepStrictEqual(got.data, want.data), `${name}: the same output`);
      assert(JSON.stringify(got.data) === JSON.stringify(want.data), `${name}: the same key order`);
    } else assert(isDeepStrictEqual(issues(got), issues(want)), `${name}: the same issues`);
  }
}
