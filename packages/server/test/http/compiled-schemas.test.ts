// compileSchemas: Zod schemas get Zod's generated parser (z.compile) at startup, for HTTP
// routes and WebSocket events alike, with the same outputs and the same errors as safeParse.
// The one thing a caller can see is that a refinement runs twice on input that fails (the
// fast path, then the runtime parser that words the error): that is how these tests tell a
// compiled schema from one left as it is.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { App } from '../../src/index.ts';
import { compiledSchema, loadSchemaCompiler } from '../../src/http/schema-compile.ts';
import { openWs, start, type Running } from '../helpers.ts';

function counted() {
  const calls = { n: 0 };
  const name = z.string().refine(
    (s) => {
      calls.n++;
      return s !== 'taken';
    },
    { message: 'name taken' },
  );
  const body = z.object({ name, age: z.number().int().min(0).max(150), tags: z.array(z.string().min(1)).max(3).default([]) });
  return { calls, body };
}

async function serve(options: { compileSchemas?: boolean }) {
  const http = counted();
  const event = counted();
  const query = z.object({ limit: z.coerce.number().int().max(100).default(10) });
  const app = new App(options);
  app.post('/users', { body: http.body, query }, (req, res) => res.status(201).json({ body: req.body, limit: req.query.limit }));
  app.ws('/live', { events: { join: { schema: event.body, handler: (ws, data) => data } } });
  return { srv: await start(app), http, event, schema: http.body };
}

function post(srv: Running, body: unknown, path = '/users') {
  return fetch(srv.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

for (const compileSchemas of [undefined, true, false] as const) {
  const compiled = compileSchemas !== false;
  describe(`compileSchemas: ${String(compileSchemas)}${compileSchemas === undefined ? ' (the default)' : ''}`, () => {
    let s: Awaited<ReturnType<typeof serve>>;
    before(async () => {
      s = await serve(compileSchemas === undefined ? {} : { compileSchemas });
    });
    after(() => s.srv.close());

    test('a valid body: the output as safeParse gives it (unknown keys stripped, defaults set), the refinement run once', async () => {
      const input = { name: 'ada', age: 36, extra: 'dropped' };
      s.http.calls.n = 0;
      const res = await post(s.srv, input, '/users?limit=7');
      assert.equal(res.status, 201);
      assert.deepEqual(await res.json(), { body: { name: 'ada', age: 36, tags: [] }, limit: 7 });
      assert.equal(s.http.calls.n, 1);
    });

    test(`an invalid body: a 400 with the issues safeParse gives; the refinement ran ${compiled ? 'twice' : 'once'}`, async () => {
      for (const input of [{ name: 'taken', age: 1 }, { name: 'bo', age: -1, tags: ['', 'x', 'y', 'z'] }, { age: '1' }, []]) {
        const expected = s.schema.safeParse(input);
        assert.equal(expected.success, false);
        s.http.calls.n = 0;
        const res = await post(s.srv, input);
        assert.equal(res.status, 400);
        const got = (await res.json()) as { issues: { path: unknown[]; message: string }[] };
        assert.deepEqual(
          got.issues,
          expected.error!.issues.map((i) => ({ path: i.path, message: i.message })),
        );
        const ranRefinement = typeof (input as { name?: unknown }).name === 'string';
        if (ranRefinement) assert.equal(s.http.calls.n, compiled ? 2 : 1, JSON.stringify(input));
      }
    });

    test('a WebSocket event: the same output and issues, the same count', async () => {
      const c = await openWs(`ws://127.0.0.1:${s.srv.port}/live`);
      try {
        s.event.calls.n = 0;
        c.ws.send(JSON.stringify({ type: 'event', event: 'join', data: { name: 'ada', age: 3, x: 1 }, ref: 1 }));
        assert.deepEqual(await c.next((m) => m.ref === 1), { type: 'reply', ref: 1, data: { name: 'ada', age: 3, tags: [] } });
        assert.equal(s.event.calls.n, 1);
        s.event.calls.n = 0;
        c.ws.send(JSON.stringify({ type: 'event', event: 'join', data: { name: 'taken', age: 3 }, ref: 2 }));
        const refused = await c.next((m) => m.ref === 2);
        assert.equal(refused.code, 'VALIDATION');
        assert.deepEqual(refused.issues, [{ path: ['name'], message: 'name taken' }]);
        assert.equal(s.event.calls.n, compiled ? 2 : 1);
      } finally {
        c.ws.close();
      }
    });
  });
}

describe('which schemas are compiled', () => {
  before(() => loadSchemaCompiler());

  test('a Zod schema of the version Tachyon imports: a compiled copy, the original untouched', () => {
    const schema = z.object({ a: z.string() });
    const run = (schema as unknown as { _zod: { run: unknown } })._zod.run;
    const copy = compiledSchema(schema);
    assert.notEqual(copy, schema);
    assert.equal((schema as unknown as { _zod: { run: unknown } })._zod.run, run);
    assert.deepEqual(copy.safeParse({ a: 'x', b: 1 }), { success: true, data: { a: 'x' } });
  });

  test('a schema of another Zod version, an async one, and a non-Zod object: left as they are', () => {
    const other = z.object({ a: z.string() });
    const internals = (other as unknown as { _zod: { version: object } })._zod;
    internals.version = { major: 4, minor: 99, patch: 0 };
    assert.equal(compiledSchema(other), other);
    const asyncOne = z.object({ a: z.string().refine(async () => true) });
    assert.equal(compiledSchema(asyncOne), asyncOne);
    const plain = { '~standard': { version: 1, vendor: 'x', validate: (v: unknown) => ({ value: v }) } };
    assert.equal(compiledSchema(plain), plain);
  });

  test('async refinements still validate through a compiled app', async () => {
    const app = new App();
    app.post('/r', { body: z.object({ name: z.string() }).refine(async (b) => b.name !== 'no', { message: 'no' }) }, (req) => req.body);
    const srv = await start(app);
    try {
      assert.deepEqual(await (await post(srv, { name: 'yes' }, '/r')).json(), { name: 'yes' });
      assert.equal((await post(srv, { name: 'no' }, '/r')).status, 400);
    } finally {
      await srv.close();
    }
  });

  test('compileSchemas must be a boolean', () => {
    assert.throws(() => new App({ compileSchemas: 'yes' as never }), /compileSchemas must be a boolean/);
  });
});
