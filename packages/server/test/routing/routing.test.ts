import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { App, Router } from '../../src/index.ts';
import { rawRequest, start, statusOf, type Running } from '../helpers.ts';

describe('routing', () => {
  let srv: Running;
  before(async () => {
    const app = new App();
    app.get('/', (req, res) => res.end('root'));
    app.get('/users', () => 'list');
    app.get('/users/me', () => 'me');
    app.get('/users/:id', (req) => `user ${req.params.id}`);
    app.get('/users/:id/posts/:post', (req) => req.params);
    app.post('/users', () => 'created');
    app.put('/users/:id', () => 'put');
    app.patch('/users/:id', () => 'patch');
    app.delete('/users/:id', () => 'delete');
    app.options('/opts', (req, res) => res.status(200).header('x-own-options', '1').end());
    app.head('/explicit-head', (req, res) => res.header('x-head', 'own').end());
    app.get('/explicit-head', () => 'body from get');
    app.any('/anything', (req) => `any ${req.method}`);
    app.get('/files/*', (req) => `file ${req.params['*']}`);
    app.get('/a/:x/*', (req) => `${req.params.x}|${req.params['*']}`);
    app.get('/Case', () => 'case');
    srv = await start(app);
  });
  after(() => srv.close());

  const get = async (path: string, init?: RequestInit) => {
    const r = await fetch(srv.url + path, init);
    return { status: r.status, text: await r.text(), headers: r.headers };
  };

  test('every method routes to its handler', async () => {
    for (const [method, expected] of [['POST', 'created']] as const) assert.equal((await get('/users', { method })).text, expected);
    for (const method of ['PUT', 'PATCH', 'DELETE']) assert.equal((await get('/users/1', { method })).text, method.toLowerCase());
    assert.equal((await get('/anything', { method: 'PATCH' })).text, 'any PATCH');
    assert.equal((await get('/anything')).text, 'any GET');
  });

  test('static segments win over params', async () => {
    assert.equal((await get('/users/me')).text, 'me');
    assert.equal((await get('/users/42')).text, 'user 42');
  });

  test('params are URL-decoded, several per path', async () => {
    assert.equal((await get('/users/a%2Fb%20c')).text, 'user a/b c');
    assert.deepEqual(JSON.parse((await get('/users/7/posts/caf%C3%A9')).text), { id: '7', post: 'café' });
  });

  test('invalid percent-encoding in a param is a 400, not a crash', async () => {
    const r = await get('/users/%E0%A4%A');
    assert.equal(r.status, 400);
    assert.match(JSON.parse(r.text).error, /percent-encoding/);
  });

  test('wildcards capture the rest of the path', async () => {
    assert.equal((await get('/files/a/b/c.txt')).text, 'file a/b/c.txt');
    assert.equal((await get('/files/')).text, 'file ');
    assert.equal((await get('/a/one/two/three')).text, 'one|two/three');
  });

  test('GET answers HEAD with headers and no body; explicit HEAD wins', async () => {
    const r = await fetch(srv.url + '/users/5', { method: 'HEAD' });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-length'), String('user 5'.length));
    assert.equal(await r.text(), '');
    const own = await fetch(srv.url + '/explicit-head', { method: 'HEAD' });
    assert.equal(own.headers.get('x-head'), 'own');
    const raw = await rawRequest(srv.port, 'HEAD /users/5 HTTP/1.1\r\nHost: x\r\n\r\n', { until: /\r\n\r\n/ });
    assert.equal(statusOf(raw), 200);
    assert.ok(!raw.includes('user 5'), 'HEAD response must not carry a body');
  });

  test('unknown method on a known path → 405 with Allow; OPTIONS → 204 with Allow', async () => {
    const r = await get('/users/1', { method: 'POST' });
    assert.equal(r.status, 405);
    assert.deepEqual(r.headers.get('allow')!.split(', ').sort(), ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'PUT']);
    const o = await get('/users/1', { method: 'OPTIONS' });
    assert.equal(o.status, 204);
    assert.deepEqual(o.headers.get('allow')!.split(', ').sort(), ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'PUT']);
    const own = await get('/opts', { method: 'OPTIONS' });
    assert.equal(own.status, 200);
    assert.equal(own.headers.get('x-own-options'), '1');
  });

  test('unmatched paths → 404 JSON', async () => {
    const r = await get('/nope/deeper');
    assert.equal(r.status, 404);
    assert.deepEqual(JSON.parse(r.text), { error: 'Cannot GET /nope/deeper' });
  });

  test('routes are case-sensitive', async () => {
    assert.equal((await get('/Case')).status, 200);
    assert.equal((await get('/case')).status, 404);
    assert.equal((await get('/USERS')).status, 404);
  });

  test("trailing slash: 'ignore' (default) serves both forms", async () => {
    assert.equal((await get('/users/')).text, 'list');
    assert.equal((await get('/users/9/')).text, 'user 9');
  });
});

describe('trailing slash policies', () => {
  test("'strict' treats /x/ and /x as different paths", async () => {
    const app = new App({ trailingSlash: 'strict' });
    app.get('/x', () => 'x');
    const srv = await start(app);
    try {
      assert.equal((await fetch(srv.url + '/x')).status, 200);
      assert.equal((await fetch(srv.url + '/x/')).status, 404);
    } finally {
      await srv.close();
    }
  });

  test("'redirect' answers the other form with 308, keeping the query", async () => {
    const app = new App({ trailingSlash: 'redirect' });
    app.get('/x/:id', (req) => req.params.id);
    const srv = await start(app);
    try {
      const r = await fetch(srv.url + '/x/5/?a=1', { redirect: 'manual' });
      assert.equal(r.status, 308);
      assert.equal(r.headers.get('location'), '/x/5?a=1');
    } finally {
      await srv.close();
    }
  });
});

describe('routers', () => {
  test('attach mounts routes under a prefix, nested, including routes added after attach', async () => {
    const app = new App();
    const api = new Router();
    const v1 = new Router();
    api.get('/', () => 'api root');
    v1.get('/items/*', (req, res) => res.send(`wild ${req.params['*']}`));
    api.attach('/v1', v1);
    app.attach('/api', api);
    v1.get('/late', () => 'late');
    const srv = await start(app);
    try {
      assert.equal(await (await fetch(srv.url + '/api')).text(), 'api root');
      assert.equal(await (await fetch(srv.url + '/api/v1/items/x/y')).text(), 'wild x/y');
      assert.equal(await (await fetch(srv.url + '/api/v1/late')).text(), 'late');
    } finally {
      await srv.close();
    }
  });

  test('bad declarations fail when declared, not at startup', () => {
    const app = new App();
    assert.throws(() => app.get('users', () => 1), /must start with/);
    assert.throws(() => app.get('/a/*/b', () => 1), /last segment/);
    assert.throws(() => app.get('/a/:x/:x', () => 1), /Duplicate/);
    assert.throws(() => app.get('/a/:1bad', () => 1), /Invalid parameter/);
    assert.throws(() => (app.get as any)('/a'), /needs a handler/);
    assert.throws(() => (app.get as any)('/a', { body: 42 }, () => 1), /Standard Schema/);
    assert.throws(() => app.use('/a/:id', () => 1), /literal/);
    assert.throws(() => app.attach('/x', app), /itself/);
  });
});
