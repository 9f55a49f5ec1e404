// app.request(): the full lifecycle without a port to manage.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { App, HttpError, Router } from '../../src/index.ts';
import { start } from '../helpers.ts';

function userApp() {
  const app = new App({ cookieSecret: 's3cret' });
  app.use((req, res, next) => {
    res.header('x-mw', 'ran');
    return next();
  });
  app.get(
    '/users/:id',
    { params: z.object({ id: z.coerce.number().int() }), query: z.object({ fields: z.string().optional() }) },
    (req) => ({ id: req.params.id, fields: req.query.fields ?? null }),
  );
  app.post('/users', { body: z.object({ name: z.string().min(1) }) }, (req, res) =>
    res.status(201).cookie('sid', 'abc', { signed: true, httpOnly: true }).json({ name: req.body.name }),
  );
  app.get('/whoami', (req) => ({ sid: req.signedCookies.sid ?? null, host: req.header('host'), ip: req.ip }));
  app.get('/teapot', () => {
    throw new HttpError(418, 'short and stout');
  });
  app.get('/events', (req, res) => {
    const sse = res.sse();
    sse.send({ n: 1 });
    sse.send({ n: 2 });
    sse.close();
  });
  const api = new Router();
  api.error((err, _req, res) => res.status(502).json({ wrapped: (err as Error).message }));
  api.get('/fail', () => {
    throw new Error('inner');
  });
  app.attach('/api', api);
  return app;
}

describe('app.request()', () => {
  test('runs middleware, validation, handlers, errors, cookies, HEAD, 404 and 405 like a real request', async () => {
    const app = userApp();
    try {
      let res = await app.request('/users/42?fields=a');
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-mw'), 'ran');
      assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.deepEqual(await res.json(), { id: 42, fields: 'a' });

      res = await app.request('/users/nope');
      assert.equal(res.status, 400);
      assert.equal((await res.json()).error, 'Invalid params');

      res = await app.request('/users', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Ada' }),
      });
      assert.equal(res.status, 201);
      const cookie = res.headers.getSetCookie()[0]!;
      assert.match(cookie, /^sid=abc\.[^;]+; Path=\/; HttpOnly/);
      res = await app.request('/whoami', { headers: { cookie: cookie.split(';')[0]! } });
      const who = await res.json();
      assert.equal(who.sid, 'abc', 'the signed cookie round-trips');
      assert.equal(who.host, 'localhost');
      assert.equal(who.ip, '127.0.0.1');

      res = await app.request('/users', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":""}' });
      assert.equal(res.status, 400);

      res = await app.request('/users/1', { method: 'HEAD' });
      assert.equal(res.status, 200);
      assert.ok(Number(res.headers.get('content-length')) > 0);
      assert.equal(await res.text(), '');

      res = await app.request('/users/1', { method: 'DELETE' });
      assert.equal(res.status, 405);
      assert.match(res.headers.get('allow')!, /GET/);
      assert.equal((await app.request('/nothing')).status, 404);
      res = await app.request('/teapot');
      assert.equal(res.status, 418);
      assert.deepEqual(await res.json(), { error: 'short and stout' });
      res = await app.request('/api/fail');
      assert.equal(res.status, 502, "the router's error handler answered");
      assert.deepEqual(await res.json(), { wrapped: 'inner' });
    } finally {
      await app.close();
    }
  });

  test('takes a web Request or an absolute URL (its host is sent); streamed bodies stay streams', async () => {
    const app = userApp();
    try {
      let res = await app.request(new Request('http://example.test/whoami'));
      assert.equal((await res.json()).host, 'example.test');
      res = await app.request(new URL('http://api.example.test:8080/users/3'));
      assert.deepEqual(await res.json(), { id: 3, fields: null });
      res = await app.request('/events');
      assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.equal(await res.text(), 'data: {"n":1}\n\ndata: {"n":2}\n\n');
      await assert.rejects(app.request(42 as never), /takes a path/);
    } finally {
      await app.close();
    }
  });

  test('concurrent requests; the same app can also listen; after close() requests are refused', async () => {
    const app = userApp();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => app.request(`/users/${i}`).then((r) => r.json())));
    assert.deepEqual(
      results.map((r) => r.id),
      Array.from({ length: 20 }, (_, i) => i),
    );
    const srv = await start(app);
    assert.equal((await fetch(`${srv.url}/users/5`)).status, 200);
    assert.equal((await app.request('/users/6')).status, 200);
    await srv.close();
    await assert.rejects(app.request('/users/1'), /closed/);
    await app.close(); // idempotent
  });

  test('a test process that never calls app.close() still exits (the internal port closes when idle)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tachyon-request-'));
    const script = path.join(dir, 'script.ts');
    const index = fileURLToPath(new URL('../../src/index.ts', import.meta.url));
    writeFileSync(
      script,
      `import { App } from ${JSON.stringify(index)};\nconst app = new App();\napp.get('/', () => 'hi');\nconst res = await app.request('/');\nconsole.log(res.status, await res.text());\n`,
    );
    const started = Date.now();
    const r = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 10_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), '200 hi');
    assert.ok(Date.now() - started < 5000, 'exited promptly');
  });
});
