// @tachyon/client/http against a real server: real sockets, the app's own type.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { App, Router } from '../../server/src/index.ts';
import { client, fillPath, queryString } from '../src/http.ts';
import { freePort } from './helpers.ts';

const User = z.object({ id: z.number(), name: z.string() });
const NotFound = z.object({ error: z.string() });

function makeApp() {
  const users = new Router()
    .get(
      '/:id',
      {
        params: z.object({ id: z.coerce.number() }),
        query: z.object({ fields: z.string().optional() }),
        response: { 200: User, 404: NotFound },
      },
      (req, res) => {
        if (req.params.id === 0) {
          res.status(404);
          return { error: 'no such user' };
        }
        return { id: req.params.id, name: req.query.fields ?? 'ada' };
      },
    )
    .post('/', { body: z.object({ name: z.string() }), response: { 201: User } }, (req, res) => {
      res.status(201);
      return { id: 7, name: req.body.name };
    });
  return new App({ logger: silent })
    .get('/echo/:a/:b', (req) => ({ params: req.params, query: req.query, auth: req.header('authorization') ?? null }))
    .get('/files/*', (req) => req.params['*'])
    .get('/text', (req, res) => res.type('text/plain; charset=utf-8').send('plain words'))
    .get('/bytes', (req, res) => res.send(new Uint8Array([1, 2, 3])))
    .get('/empty', (req, res) => res.status(204).end())
    .get('/bad-json', (req, res) => res.type('application/json').send('{nope'))
    .put('/form', { consumes: ['urlencoded'], body: z.object({ a: z.string() }) }, (req) => req.body)
    .patch('/echo-body', (req) => req.json())
    .delete('/things/:id', (req, res) => res.status(202).json({ deleted: req.params.id }))
    .attach('/users', users);
}
const silent = { error() {}, warn() {}, info() {}, debug() {} };

describe('client<typeof app>() over HTTP', () => {
  const app = makeApp();
  let base = '';
  let api: ReturnType<typeof client<typeof app>>;
  before(async () => {
    const server = await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${server.port}`;
    api = client<typeof app>(`${base}/`, { headers: () => ({ authorization: 'Bearer t' }) });
  });
  after(() => app.close());

  test('GET with params and query: typed data by status', async () => {
    const r = await api.get('/users/:id', { params: { id: 5 }, query: { fields: 'grace' } });
    assert.equal(r.status, 200);
    assert.equal(r.ok, true);
    assert.deepEqual(r.data, { id: 5, name: 'grace' });
    assert.match(r.headers.get('content-type') ?? '', /application\/json/);
  });

  test('a declared error status resolves with ok: false and its data', async () => {
    const r = await api.get('/users/:id', { params: { id: 0 } });
    assert.equal(r.status, 404);
    assert.equal(r.ok, false);
    assert.deepEqual(r.data, { error: 'no such user' });
  });

  test('an undeclared error (a 400 from validation) resolves too, with what the server sent', async () => {
    const r = await api.get('/users/:id', { params: { id: 'x' as unknown as number } });
    // Not a declared status: the type says 200 | 404, the server may still answer others.
    assert.equal(r.status as number, 400);
    assert.equal(r.ok, false);
    assert.equal((r.data as unknown as { issues: unknown[] }).issues.length > 0, true);
  });

  test('params are encoded into the path; query arrays repeat; client headers are sent', async () => {
    const r = await api.get('/echo/:a/:b', { params: { a: 'a b/c?', b: 'é' }, query: { tag: ['x', 'y'], n: 1, skip: undefined } });
    assert.deepEqual(r.data, { params: { a: 'a b/c?', b: 'é' }, query: { tag: ['x', 'y'], n: '1' }, auth: 'Bearer t' });
  });

  test('per-call headers win over the client headers', async () => {
    const r = await api.get('/echo/:a/:b', { params: { a: '1', b: '2' }, headers: { authorization: 'mine' } });
    assert.equal((r.data as { auth: string }).auth, 'mine');
  });

  test('a wildcard keeps its slashes, each segment encoded', async () => {
    const r = await api.get('/files/*', { params: { '*': 'dir one/file.txt' } });
    assert.equal(r.data, 'dir one/file.txt');
  });

  test('POST sends JSON and gets the declared status', async () => {
    const r = await api.post('/users', { body: { name: 'lin' } });
    assert.equal(r.status, 201);
    assert.deepEqual(r.data, { id: 7, name: 'lin' });
  });

  test('PUT with a form body (URLSearchParams goes as it is)', async () => {
    const r = await api.put('/form', { body: new URLSearchParams({ a: 'b' }) as never });
    assert.deepEqual(r.data, { a: 'b' });
  });

  test('PATCH with any JSON body, DELETE with params', async () => {
    const p = await api.patch('/echo-body', { body: { deep: [1, { x: null }] } });
    assert.deepEqual(p.data, { deep: [1, { x: null }] });
    const d = await api.delete('/things/:id', { params: { id: 9 } });
    assert.equal(d.status, 202);
    assert.deepEqual(d.data, { deleted: '9' });
  });

  test('text, bytes and empty replies', async () => {
    assert.equal((await api.get('/text')).data, 'plain words');
    const bytes = (await api.get('/bytes')).data;
    assert.ok(bytes instanceof ArrayBuffer);
    assert.deepEqual([...new Uint8Array(bytes as ArrayBuffer)], [1, 2, 3]);
    const empty = await api.get('/empty');
    assert.equal(empty.status, 204);
    assert.equal(empty.data, undefined);
  });

  test('a reply that says JSON but is not rejects with a clear error', async () => {
    await assert.rejects(api.get('/bad-json'), /GET .*\/bad-json: the 200 reply says application\/json but is not JSON/);
  });

  test('a base URL with a path prefix, and a custom fetch', async () => {
    const seen: string[] = [];
    const prefixed = client<typeof app>(`${base}/users`, {
      fetch: (input, init) => {
        seen.push(`${init?.method} ${String(input)}`);
        return fetch(input, init);
      },
    });
    // The prefix is the base URL's: /users + /users/:id → /users/users/1, not declared: 404.
    const r = await prefixed.get('/users/:id', { params: { id: 1 } });
    assert.equal(r.status, 404);
    assert.deepEqual(seen, [`GET ${base}/users/users/1`]);
  });

  test('an aborted call rejects', async () => {
    const ac = new AbortController();
    ac.abort(new Error('gave up'));
    await assert.rejects(api.get('/users/:id', { params: { id: 1 }, signal: ac.signal }), /gave up/);
  });
});

describe('client errors', () => {
  test('a network failure rejects (nothing listens)', async () => {
    const port = await freePort();
    const api = client<ReturnType<typeof makeApp>>(`http://127.0.0.1:${port}`);
    await assert.rejects(api.get('/text'), TypeError);
  });

  test('bad arguments fail clearly', async () => {
    assert.throws(() => client(42 as never), /baseUrl must be a string/);
    assert.throws(() => client('http://x', null as never), /options must be an object/);
    assert.throws(() => client('http://x', { fetch: 'no' as never }), /no fetch/);
    const api = client<ReturnType<typeof makeApp>>('http://127.0.0.1:9');
    await assert.rejects(api.get('text' as never), /the path must start with "\/"/);
    await assert.rejects(api.get('/echo/:a/:b', { params: { a: 'x' } as never }), /missing param "b"/);
  });

  test('fillPath and queryString', () => {
    assert.equal(fillPath('/a/:x/b/:y', { x: 'é/', y: 0 }), '/a/%C3%A9%2F/b/0');
    assert.equal(queryString({ a: [1, null, 2], b: true, c: null }), '?a=1&a=2&b=true');
    assert.equal(queryString({}), '');
    assert.equal(queryString(undefined), '');
  });
});
