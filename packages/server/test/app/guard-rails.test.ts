// The mistakes newcomers make, each refused or reported with a message that says what to do.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import * as v from 'valibot';
import { App, Router } from '../../src/index.ts';
import { eventually, recordingLogger, sleep, start } from '../helpers.ts';

const INDEX = fileURLToPath(new URL('../../src/index.ts', import.meta.url));

describe('declaration and startup', () => {
  test('listen() given a string port or a callback', async () => {
    const app = new App();
    await assert.rejects(app.listen('3000' as never), /port as a number, got the string "3000": use app.listen\(Number\(3000\)\)/);
    await assert.rejects(app.listen(0, (() => {}) as never), /takes no callback: it returns a promise/);
    await assert.rejects(
      (app.listen as (...a: unknown[]) => Promise<unknown>)(0, '127.0.0.1', () => {}),
      /takes no callback/,
    );
    await assert.rejects(app.listen(null as never), /takes a port number or \{ port, host \}/);
    await assert.rejects(app.listen({ port: 70000 }), /Invalid port 70000/);
  });

  test('a WebSocket event schema that is not a Standard Schema fails at app.ws()', () => {
    const app = new App();
    assert.throws(
      () => app.ws('/live', { events: { chat: { schema: { parse() {} } as never, handler() {} } } }),
      /ws \/live: event chat: schema must be a Standard Schema validator/,
    );
    assert.throws(() => app.ws('/live', { events: { chat: { schema: null as never, handler() {} } } }), /got null/);
    app.ws('/ok', { events: { chat: { schema: z.object({ text: z.string() }), handler() {} } } });
  });

  test('a params schema naming a key the path does not have (zod and valibot), checked with the full path', async () => {
    const zodApp = new App();
    zodApp.get('/users/:id', { params: z.object({ userId: z.string() }) }, () => 'x');
    await assert.rejects(
      zodApp.request('/users/1'),
      /Route GET \/users\/:id: the params schema has a key "userId" that the path does not declare \(path params: :id\)/,
    );
    const valibotApp = new App();
    valibotApp.get('/files/*', { params: v.object({ name: v.string() }) }, () => 'x');
    await assert.rejects(valibotApp.listen(0, '127.0.0.1'), /key "name" .*\(path params: \*\)/);
    // Keys of the full path count, wherever they were declared.
    const app = new App();
    const r = new Router();
    r.get('/orgs/:org/users/:id', { params: z.object({ org: z.string(), id: z.string() }) }, (req) => `${req.params.org}/${req.params.id}`);
    app.attach('/api', r);
    assert.equal(await (await app.request('/api/orgs/o1/users/7')).text(), 'o1/7');
    await app.close();
  });

  test('two identical routes (same method, same path up to parameter names or a trailing slash) fail at startup', async () => {
    const a = new App();
    a.get('/users/:id', () => 'a');
    a.get('/users/:userId', () => 'b');
    await assert.rejects(a.request('/users/1'), /Route GET \/users\/:userId is declared twice \(first as GET \/users\/:id\)/);
    const b = new App();
    const r = new Router();
    r.get('/x', () => 'r');
    b.get('/api/x/', () => 'app');
    b.attach('/api', r);
    await assert.rejects(b.request('/api/x'), /declared twice .*trailingSlash 'ignore'/);
    const strict = new App({ trailingSlash: 'strict' });
    strict.get('/x', () => 'no slash');
    strict.get('/x/', () => 'slash');
    strict.post('/x', () => 'post');
    assert.equal(await (await strict.request('/x/')).text(), 'slash');
    await strict.close();
  });

  test("app.use('/x', router) points at attach()", () => {
    const app = new App();
    assert.throws(
      () => app.use('/x', new Router() as never),
      /use\(\) got a Router: routers are mounted with attach\(\), e.g. app.attach\("\/x", router\)/,
    );
    assert.throws(() => app.use(new Router() as never), /app.attach\("\/", router\)/);
    assert.throws(() => app.use('x' as never, 42 as never), /Prefix must start with/);
    assert.throws(() => app.use(42 as never), /Middleware must be a function \(req, res, next\), got number/);
  });
});

describe('at request time', () => {
  test('a handler that neither answers nor returns: 503, and the log line says so with the route', async () => {
    const { entries, logger } = recordingLogger();
    const app = new App({ logger, requestTimeout: 100 });
    app.get('/forgot/:id', () => {
      void 0; // returns undefined and never answers
    });
    app.get('/pending', () => new Promise(() => {}));
    app.use('/mw', (_req, _res, next) => next());
    app.get('/mw/forgot', () => {});
    const srv = await start(app);
    try {
      const r = await fetch(srv.url + '/forgot/1');
      assert.equal(r.status, 503);
      assert.deepEqual(await r.json(), { error: 'Request timed out' });
      assert.equal((await fetch(srv.url + '/pending')).status, 503);
      assert.equal((await fetch(srv.url + '/mw/forgot')).status, 503);
      const lines = entries.filter((e) => e.level === 'error').map((e) => e.msg);
      assert.ok(
        lines.includes(
          'GET /forgot/:id: no answer within 100 ms; the handler returned without answering and without returning a promise (forgot to return/await, or to call res.json()/res.end()?): answered 503',
        ),
        lines.join('\n'),
      );
      assert.ok(
        lines.some((l) => l?.startsWith("GET /pending: no answer within 100 ms; the handler's promise is still pending")),
        lines.join('\n'),
      );
      assert.ok(
        lines.some((l) => l?.startsWith('GET /mw/forgot: no answer within 100 ms; the handler returned without answering')),
        'a middleware passing through does not hide it',
      );
    } finally {
      await srv.close();
    }
  });

  test('answering twice throws in development (the error reaches the log with the route); late writes after a timeout or an abort stay silent', async () => {
    const { entries, logger } = recordingLogger();
    const app = new App({ logger, requestTimeout: 50 });
    app.get('/twice', (_req, res) => {
      res.json({ a: 1 });
      res.json({ a: 2 });
    });
    app.get('/header-after', (_req, res) => {
      res.send('body');
      res.header('x-late', '1');
    });
    let lateError: unknown = 'none';
    app.get('/after-timeout', async (_req, res) => {
      await sleep(600);
      try {
        res.json({ late: true });
        lateError = null;
      } catch (err) {
        lateError = err;
      }
    });
    const srv = await start(app);
    try {
      const r = await fetch(srv.url + '/twice');
      assert.deepEqual(await r.json(), { a: 1 }, 'the first answer stands');
      const h = await fetch(srv.url + '/header-after');
      assert.equal(await h.text(), 'body');
      assert.equal(h.headers.get('x-late'), null);
      const errors = entries.filter((e) => e.msg === 'error after the response was sent').map((e) => (e.obj as { err: Error }).err.message);
      assert.ok(
        errors.some((m) => m.startsWith('res.json() after the response was sent (GET /twice)')),
        errors.join('\n'),
      );
      assert.ok(
        errors.some((m) => m.startsWith('res.header() after the response was sent (GET /header-after)')),
        errors.join('\n'),
      );
      assert.equal((await fetch(srv.url + '/after-timeout')).status, 503);
      await eventually(() => lateError !== 'none');
      assert.equal(lateError, null, 'no throw: the framework answered, the app could not know');
    } finally {
      await srv.close();
    }
  });

  test('in production (NODE_ENV=production) answering twice is logged as a warning, not thrown', () => {
    const script = `
      import { App } from ${JSON.stringify(INDEX)};
      const lines = [];
      const rec = (level) => (obj, msg) => lines.push({ level, msg });
      const app = new App({ logger: { error: rec('error'), warn: rec('warn'), info: rec('info'), debug: rec('debug') } });
      app.get('/', (req, res) => { res.json(1); res.json(2); res.status(500); });
      const res = await app.request('/');
      console.log(JSON.stringify({ status: res.status, body: await res.text(), lines }));
      await app.close();`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { ...process.env, NODE_ENV: 'production' },
      timeout: 10_000,
    });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.status, 200);
    assert.equal(out.body, '1');
    const warns = out.lines.filter((l: { level: string }) => l.level === 'warn').map((l: { msg: string }) => l.msg);
    assert.equal(warns.length, 2);
    assert.match(warns[0], /^res.json\(\) after the response was sent \(GET \/\).*; ignored$/);
    assert.match(warns[1], /^res.status\(\) after the response was sent/);
    assert.ok(!out.lines.some((l: { level: string }) => l.level === 'error'));
  });

  test('an error handler that throws: both errors are logged, the next handler answers', async () => {
    const { entries, logger } = recordingLogger();
    const app = new App({ logger });
    app.error(() => {
      throw new TypeError('handler bug');
    });
    app.get('/', () => {
      throw new Error('original problem');
    });
    const srv = await start(app);
    try {
      const r = await fetch(srv.url + '/');
      assert.equal(r.status, 500);
      const line = entries.find((e) => String(e.msg).startsWith('error handler threw'));
      assert.ok(line, 'logged');
      const obj = line!.obj as { err: Error; original: { message: string; type: string } };
      assert.equal(obj.err.message, 'handler bug');
      assert.equal(obj.original.message, 'original problem');
      assert.equal(obj.original.type, 'Error');
    } finally {
      await srv.close();
    }
  });
});

describe('shutdown and streams', () => {
  test('open SSE streams and res.stream() end at close(), req.signal aborts: close() does not wait for its timeout', async () => {
    const app = new App();
    let sseSignal: AbortSignal | undefined;
    let streamStopped = false;
    app.get('/sse', (req, res) => {
      sseSignal = req.signal;
      const sse = res.sse();
      sse.send('hello');
      const timer = setInterval(() => sse.comment('tick'), 20);
      req.signal.addEventListener('abort', () => clearInterval(timer));
    });
    app.get('/stream', async (req, res) => {
      await res.stream(
        (async function* () {
          while (!req.signal.aborted) {
            yield 'chunk\n';
            await sleep(20);
          }
          streamStopped = true;
        })(),
      );
    });
    const srv = await start(app);
    const sse = await fetch(srv.url + '/sse');
    const stream = await fetch(srv.url + '/stream');
    const sseReader = sse.body!.getReader();
    const streamReader = stream.body!.getReader();
    await sseReader.read();
    await streamReader.read();
    const started = Date.now();
    await srv.server.close({ timeout: 5000 });
    const took = Date.now() - started;
    assert.ok(took < 1000, `close() took ${took} ms`);
    assert.equal(sseSignal?.aborted, true);
    assert.equal((sseSignal!.reason as Error).message, 'Server shutting down');
    // Both bodies end cleanly (the chunked encoding is terminated), not with a reset.
    for (const reader of [sseReader, streamReader]) {
      for (;;) {
        const { done } = await reader.read();
        if (done) break;
      }
    }
    await eventually(() => streamStopped);
  });
});
