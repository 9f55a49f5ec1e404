// validateResponses: replies checked against the route's `response` schemas, with a real
// server. A reply that does not match is logged with the route and becomes a plain 500.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import * as v from 'valibot';
import { z } from 'zod';
import { App, HttpError, Router } from '../../src/index.ts';
import { recordingLogger, start } from '../helpers.ts';

const User = z.object({ id: z.number(), name: z.string() });
const Problem = z.object({ error: z.string() });
/** Data the compiler cannot see (from a database, another service): only the run-time check stops it. */
const untyped = (value: unknown): never => value as never;

function makeApp(validateResponses: boolean | undefined) {
  const log = recordingLogger();
  const app = new App({ logger: log.logger, ...(validateResponses === undefined ? {} : { validateResponses }) });
  const r = new Router()
    .get('/user/:n', { response: { 200: User, 404: Problem } }, (req, res) => {
      const n = req.params.n;
      if (n === 'missing') {
        res.status(404);
        return { error: 'none' };
      }
      if (n === 'wrong') return untyped({ id: '1', name: 'x' });
      if (n === 'wrong-404') return res.status(404).json(untyped({ message: 'not the schema' }));
      if (n === 'secret') return res.header('x-secret', 'leak').json(untyped({ id: 1, password: 'hunter2' }));
      if (n === 'undeclared') return res.status(500).json({ anything: true });
      if (n === 'end') return res.type('application/json').end('{"id":2,"name":"from end"}');
      if (n === 'not-json') return res.type('application/json').end('{oops');
      return { id: 1, name: 'ada' };
    })
    .get('/text', { response: { 200: z.string().max(5) } }, (req) => (req.query.long ? 'far too long' : 'short'))
    .get('/bytes', { response: { 200: z.string() } }, (req, res) => res.send(new Uint8Array([1, 2])))
    .get('/classes', { response: { '2XX': User, default: Problem } }, (req, res) => {
      if (req.query.s === '201') return res.status(201).json({ id: 1, name: 'c' });
      if (req.query.s === '418') return res.status(418).json({ error: 'teapot' });
      return res.status(503).json(untyped({ nope: 1 }));
    })
    .get('/async', { response: { 200: z.object({ ok: z.boolean() }).refine(async (x) => x.ok, 'must be ok') } }, (req) => ({
      ok: req.query.ok === '1',
    }))
    .get('/valibot', { response: { 200: v.object({ n: v.number() }) } }, (req) => (req.query.bad ? untyped({ n: 'x' }) : { n: 1 }))
    .get('/free', () => ({ anything: 'goes' }))
    .get('/thrown', { response: { 200: User, 404: Problem } }, () => {
      throw new HttpError(404, 'gone');
    })
    .get(
      '/strict-400',
      { query: z.object({ n: z.coerce.number() }), response: { 200: User, 400: z.object({ code: z.number() }) } },
      () => ({
        id: 1,
        name: 'a',
      }),
    );
  app.attach('/', r);
  return { app, log };
}

const errorLines = (log: ReturnType<typeof recordingLogger>) =>
  log.entries.filter((e) => e.level === 'error').map((e) => (e.obj as { err?: Error }).err?.message ?? e.msg);

describe('validateResponses: true', () => {
  test('matching replies pass unchanged, by exact status, class and default', async () => {
    const { app, log } = makeApp(true);
    const s = await start(app);
    try {
      const ok = await fetch(`${s.url}/user/1`);
      assert.equal(ok.status, 200);
      assert.deepEqual(await ok.json(), { id: 1, name: 'ada' });
      const missing = await fetch(`${s.url}/user/missing`);
      assert.equal(missing.status, 404);
      assert.deepEqual(await missing.json(), { error: 'none' });
      assert.deepEqual(await (await fetch(`${s.url}/user/end`)).json(), { id: 2, name: 'from end' });
      assert.equal((await fetch(`${s.url}/classes?s=201`)).status, 201);
      assert.equal((await fetch(`${s.url}/classes?s=418`)).status, 418);
      assert.equal(await (await fetch(`${s.url}/text`)).text(), 'short');
      assert.equal((await fetch(`${s.url}/async?ok=1`)).status, 200);
      assert.equal((await fetch(`${s.url}/valibot`)).status, 200);
      // Statuses no schema covers, bytes and routes without `response` are not checked.
      assert.equal((await fetch(`${s.url}/user/undeclared`)).status, 500);
      assert.deepEqual(await (await fetch(`${s.url}/user/undeclared`)).json(), { anything: true });
      assert.equal((await fetch(`${s.url}/bytes`)).status, 200);
      assert.deepEqual(await (await fetch(`${s.url}/free`)).json(), { anything: 'goes' });
      assert.deepEqual(errorLines(log), []);
    } finally {
      await s.close();
    }
  });

  test('a reply that does not match becomes a plain 500, logged with the route, status and issues', async () => {
    const { app, log } = makeApp(true);
    const s = await start(app);
    try {
      for (const [path, status, issue] of [
        ['/user/wrong', 200, 'id: '],
        ['/user/wrong-404', 404, 'error: '],
        ['/user/secret', 200, 'name: '],
        ['/user/not-json', 200, 'is not JSON'],
        ['/text?long=1', 200, ''],
        ['/classes?s=503', 503, 'error: '],
        ['/async?ok=0', 200, 'must be ok'],
        ['/valibot?bad=1', 200, 'n: '],
      ] as const) {
        log.entries.length = 0;
        const res = await fetch(`${s.url}${path}`);
        assert.equal(res.status, 500, path);
        const body = await res.text();
        assert.equal(body, '{"error":"Internal Server Error"}', path);
        // Nothing of the reply reaches the client: not its body, not its headers.
        assert.equal(res.headers.get('x-secret'), null);
        const errors = errorLines(log);
        assert.equal(errors.length, 1, `${path}: ${errors.join(' | ')}`);
        const route = path.startsWith('/user') ? 'GET /user/:n' : `GET ${path.split('?')[0]}`;
        assert.ok(errors[0]!.startsWith(`${route} answered ${status} with a body that does not match its response schema`), errors[0]);
        assert.ok(errors[0]!.includes(issue), errors[0]);
      }
    } finally {
      await s.close();
    }
  });

  test('error answers are replies too: checked when a schema covers their status', async () => {
    const { app, log } = makeApp(true);
    const s = await start(app);
    try {
      const thrown = await fetch(`${s.url}/thrown`);
      assert.equal(thrown.status, 404);
      assert.deepEqual(await thrown.json(), { error: 'gone' });
      // The validation 400 is { error, issues }: not what this route declared for 400.
      const refused = await fetch(`${s.url}/strict-400?n=x`);
      assert.equal(refused.status, 500);
      assert.match(errorLines(log).join('\n'), /GET \/strict-400 answered 400 with a body that does not match its response schema: code: /);
    } finally {
      await s.close();
    }
  });

  test('HEAD of a checked GET route is checked the same way, without a body', async () => {
    const { app } = makeApp(true);
    const s = await start(app);
    try {
      assert.equal((await fetch(`${s.url}/user/1`, { method: 'HEAD' })).status, 200);
      assert.equal((await fetch(`${s.url}/user/wrong`, { method: 'HEAD' })).status, 500);
    } finally {
      await s.close();
    }
  });
});

describe('validateResponses off (the default)', () => {
  for (const setting of [undefined, false] as const) {
    test(`${String(setting)}: replies are sent as the handler made them`, async () => {
      const { app, log } = makeApp(setting);
      const s = await start(app);
      try {
        const res = await fetch(`${s.url}/user/wrong`);
        assert.equal(res.status, 200);
        assert.deepEqual(await res.json(), { id: '1', name: 'x' });
        assert.equal((await fetch(`${s.url}/text?long=1`)).status, 200);
        assert.deepEqual(errorLines(log), []);
      } finally {
        await s.close();
      }
    });
  }

  test('a bad option value is refused at construction', () => {
    assert.throws(() => new App({ validateResponses: 'yes' as never }), /validateResponses must be a boolean/);
  });
});
