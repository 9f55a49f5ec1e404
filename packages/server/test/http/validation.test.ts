import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { after, before, describe, test } from 'node:test';
import * as v from 'valibot';
import { z } from 'zod';
import { App, ValidationError } from '../../src/index.ts';
import { start, type Running } from '../helpers.ts';

describe('validation with Zod', () => {
  let srv: Running;
  let lastError: unknown;
  before(async () => {
    const app = new App({ cookieSecret: 's' });
    app.get(
      '/users/:id',
      {
        params: z.object({ id: z.coerce.number().int().positive() }),
        query: z.object({ fields: z.string().optional(), limit: z.coerce.number().max(100).default(10) }),
      },
      (req) => ({ id: req.params.id, idType: typeof req.params.id, fields: req.query.fields, limit: req.query.limit }),
    );
    app.post('/users', { body: z.object({ name: z.string().min(1), tags: z.array(z.string()).max(3).default([]) }) }, async (req, res) =>
      res.status(201).json({ name: req.body.name, tags: req.body.tags }),
    );
    app.get('/headers', { headers: z.object({ 'x-api-key': z.string().length(8) }) }, (req) => ({ key: req.headers['x-api-key'] }));
    app.get('/cookies', { cookies: z.object({ theme: z.enum(['dark', 'light']) }) }, (req) => ({ theme: req.cookies.theme }));
    app.post(
      '/async-refine',
      { body: z.object({ name: z.string() }).refine(async (b) => b.name !== 'taken', { message: 'name taken' }) },
      (req) => req.body,
    );
    app.post('/form', { body: z.object({ a: z.string(), n: z.coerce.number() }), consumes: ['urlencoded', 'json'] }, (req) => req.body);
    app.get('/inspect', { query: z.object({ n: z.coerce.number() }) }, () => 'ok');
    app.error((err, req, res) => {
      lastError = err;
      throw err; // fall through to the default answer
    });
    srv = await start(app);
  });
  after(() => srv.close());

  test('valid params and query are coerced to their output types', async () => {
    const r = await fetch(srv.url + '/users/42?fields=a,b');
    assert.deepEqual(await r.json(), { id: 42, idType: 'number', fields: 'a,b', limit: 10 });
  });

  test('invalid params → 400 with issues; the ZodError is the cause', async () => {
    const r = await fetch(srv.url + '/users/abc');
    assert.equal(r.status, 400);
    const body = await r.json();
    assert.equal(body.error, 'Invalid params');
    assert.deepEqual(
      body.issues.map((i: { path: unknown }) => i.path),
      [['id']],
    );
    assert.ok(lastError instanceof ValidationError);
    assert.equal((lastError as ValidationError).target, 'params');
    assert.ok((lastError as ValidationError).cause instanceof z.ZodError);
  });

  test('invalid query → 400', async () => {
    const r = await fetch(srv.url + '/users/1?limit=1000');
    assert.equal(r.status, 400);
    assert.deepEqual(
      (await r.json()).issues.map((i: { path: unknown }) => i.path),
      [['limit']],
    );
  });

  test('body: valid → 201 with defaults applied; invalid → 400 with nested paths', async () => {
    let r = await fetch(srv.url + '/users', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'ada' }),
    });
    assert.equal(r.status, 201);
    assert.deepEqual(await r.json(), { name: 'ada', tags: [] });
    r = await fetch(srv.url + '/users', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: '', tags: ['a', 1] }),
    });
    assert.equal(r.status, 400);
    const paths = (await r.json()).issues.map((i: { path: unknown[] }) => i.path.join('.')).sort();
    assert.deepEqual(paths, ['name', 'tags.1']);
  });

  test('missing body on a body route → 400 (schema rejects undefined)', async () => {
    const r = await fetch(srv.url + '/users', { method: 'POST' });
    assert.equal(r.status, 400);
  });

  test('headers and cookies schemas', async () => {
    assert.equal((await fetch(srv.url + '/headers', { headers: { 'x-api-key': 'short' } })).status, 400);
    assert.deepEqual(await (await fetch(srv.url + '/headers', { headers: { 'x-api-key': '12345678' } })).json(), { key: '12345678' });
    assert.equal((await fetch(srv.url + '/cookies', { headers: { cookie: 'theme=blue' } })).status, 400);
    assert.deepEqual(await (await fetch(srv.url + '/cookies', { headers: { cookie: 'theme=dark; other=1' } })).json(), { theme: 'dark' });
  });

  test('async refinements work', async () => {
    const post = (name: string) =>
      fetch(srv.url + '/async-refine', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
    assert.equal((await post('free')).status, 200);
    const r = await post('taken');
    assert.equal(r.status, 400);
    assert.equal((await r.json()).issues[0].message, 'name taken');
  });

  test('consumes widens the accepted body types', async () => {
    const r = await fetch(srv.url + '/form', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a=x&n=5',
    });
    assert.deepEqual(await r.json(), { a: 'x', n: 5 });
    const bad = await fetch(srv.url + '/form', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'a=x' });
    assert.equal(bad.status, 415);
  });

  test('__proto__ and constructor keys in a query never reach Object.prototype', async () => {
    const r = await fetch(srv.url + '/inspect?n=1&__proto__[polluted]=1&constructor[prototype][polluted]=1&__proto__=x');
    assert.equal(r.status, 200);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

describe('a JSON body schema', () => {
  test('the handler runs in the AsyncLocalStorage context middleware set around next(), which settles after it', async () => {
    const als = new AsyncLocalStorage<string>();
    const seen: string[] = [];
    const app = new App();
    app.use((req, res, next) =>
      als.run('outer', async () => {
        await next();
        seen.push(`next settled, status ${res.statusCode}`);
      }),
    );
    app.post('/n', { body: z.object({ n: z.number() }) }, (req) => {
      seen.push('handler');
      return { n: req.body.n, store: als.getStore() ?? null };
    });
    app.post('/n-async', { body: z.object({ n: z.number() }).refine(async () => true) }, (req) => ({ store: als.getStore() ?? null }));
    const srv = await start(app);
    try {
      const post = (path: string, body: string) =>
        fetch(srv.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      assert.deepEqual(await (await post('/n', '{"n":1}')).json(), { n: 1, store: 'outer' });
      assert.deepEqual(seen, ['handler', 'next settled, status 200']);
      assert.deepEqual(await (await post('/n-async', '{"n":1}')).json(), { store: 'outer' });
      seen.length = 0;
      const bad = await post('/n', '{"n":"one"}');
      assert.equal(bad.status, 400);
      assert.deepEqual(
        (await bad.json()).issues.map((i: { path: unknown }) => i.path),
        [['n']],
      );
      assert.deepEqual(seen, ['next settled, status 400']);
      const malformed = await post('/n', '{"n":');
      assert.equal(malformed.status, 400);
      assert.match((await malformed.json()).error, /Malformed JSON/);
    } finally {
      await srv.close();
    }
  });
});

describe('validation with valibot (any Standard Schema)', () => {
  test('params, query and body validate and transform', async () => {
    const app = new App();
    app.post(
      '/items/:id',
      {
        params: v.object({ id: v.pipe(v.string(), v.transform(Number), v.integer()) }),
        query: v.object({ q: v.optional(v.string()) }),
        body: v.object({ title: v.pipe(v.string(), v.minLength(2)) }),
      },
      (req) => ({ id: req.params.id, q: req.query.q, title: req.body.title }),
    );
    let lastError: unknown;
    app.error((err) => {
      lastError = err;
      throw err;
    });
    const srv = await start(app);
    try {
      const ok = await fetch(srv.url + '/items/7?q=z', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"title":"hello"}',
      });
      assert.deepEqual(await ok.json(), { id: 7, q: 'z', title: 'hello' });
      const bad = await fetch(srv.url + '/items/7', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"title":"h"}',
      });
      assert.equal(bad.status, 400);
      assert.deepEqual(
        (await bad.json()).issues.map((i: { path: unknown }) => i.path),
        [['title']],
      );
      assert.ok(lastError instanceof ValidationError);
      assert.ok(Array.isArray((lastError as ValidationError).cause), 'non-Zod validators: the raw issues are the cause');
    } finally {
      await srv.close();
    }
  });
});
