import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import { App, HttpError, Router, silentLogger } from '../../src/index.ts';
import { eventually, recordingLogger, sleep, start } from '../helpers.ts';

describe('returned values', () => {
  test('object/array → JSON, string → text, bytes → octet-stream, Response → as given', async () => {
    const app = new App();
    app.get('/obj', () => ({ a: 1 }));
    app.get('/arr', async () => [1, 2]);
    app.get('/str', () => 'hi');
    app.get('/bytes', () => new Uint8Array([1, 2, 3]));
    app.get('/num', () => 42);
    app.get('/web', () => {
      const h = new Headers({ 'x-web': 'yes', 'content-type': 'text/csv' });
      h.append('set-cookie', 'a=1');
      h.append('set-cookie', 'b=2');
      return new Response('x,y\n1,2', { status: 202, headers: h });
    });
    app.get('/web-stream', () => {
      const body = new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode('part1 '));
          c.enqueue(new TextEncoder().encode('part2'));
          c.close();
        },
      });
      return new Response(body, { headers: { 'content-type': 'text/plain' } });
    });
    const srv = await start(app);
    try {
      let r = await fetch(srv.url + '/obj');
      assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.deepEqual(await r.json(), { a: 1 });
      assert.deepEqual(await (await fetch(srv.url + '/arr')).json(), [1, 2]);
      r = await fetch(srv.url + '/str');
      assert.equal(r.headers.get('content-type'), 'text/plain; charset=utf-8');
      assert.equal(await r.text(), 'hi');
      r = await fetch(srv.url + '/bytes');
      assert.equal(r.headers.get('content-type'), 'application/octet-stream');
      assert.deepEqual([...new Uint8Array(await r.arrayBuffer())], [1, 2, 3]);
      assert.equal(await (await fetch(srv.url + '/num')).text(), '42');
      r = await fetch(srv.url + '/web');
      assert.equal(r.status, 202);
      assert.equal(r.headers.get('x-web'), 'yes');
      assert.equal(r.headers.get('content-type'), 'text/csv');
      assert.deepEqual(r.headers.getSetCookie(), ['a=1', 'b=2']);
      assert.equal(await r.text(), 'x,y\n1,2');
      assert.equal(await (await fetch(srv.url + '/web-stream')).text(), 'part1 part2');
    } finally {
      await srv.close();
    }
  });

  test('a value returned after the handler already answered is ignored, and logged with the route', async () => {
    const log = recordingLogger();
    const app = new App({ logger: log.logger });
    app.get('/answered/:id', (req, res) => {
      res.send('first');
      return 'second';
    });
    const srv = await start(app);
    try {
      assert.equal(await (await fetch(srv.url + '/answered/1')).text(), 'first');
      await eventually(() => log.entries.some((e) => e.level === 'error'));
      const entry = log.entries.find((e) => e.level === 'error')!;
      assert.deepEqual(
        { ...(entry.obj as object), err: undefined },
        { err: undefined, method: 'GET', route: '/answered/:id', url: '/answered/1' },
      );
      assert.match(
        (entry.obj as { err: Error }).err.message,
        /^a value returned by the handler after the response was sent \(GET \/answered\/:id\)/,
      );
    } finally {
      await srv.close();
    }
  });
});

describe('request timeout', () => {
  test('returning res or the res.sse() stream after answering is not misuse', async () => {
    const log = recordingLogger();
    const app = new App({ logger: log.logger });
    app.get('/res', (req, res) => {
      res.send('answered');
      return res;
    });
    app.get('/sse', (req, res) => {
      const events = res.sse();
      events.send('hello');
      events.close();
      return events;
    });
    const srv = await start(app);
    try {
      assert.equal(await (await fetch(srv.url + '/res')).text(), 'answered');
      assert.match(await (await fetch(srv.url + '/sse')).text(), /hello/);
      assert.deepEqual(
        log.entries.filter((e) => e.level !== 'info' && e.level !== 'debug'),
        [],
      );
    } finally {
      await srv.close();
    }
  });

  test('a request nobody answers gets 503 instead of hanging, and its signal aborts', async () => {
    let aborted = false;
    const app = new App({ requestTimeout: 300, logger: silentLogger });
    app.get('/forgotten', (req) => {
      req.signal.addEventListener('abort', () => (aborted = true));
    });
    app.get('/per-route', { timeout: 100 }, async () => {
      await sleep(2000);
      return 'too late';
    });
    const srv = await start(app);
    try {
      const t0 = Date.now();
      const r = await fetch(srv.url + '/forgotten');
      assert.equal(r.status, 503);
      assert.deepEqual(await r.json(), { error: 'Request timed out' });
      assert.ok(Date.now() - t0 >= 250);
      assert.equal(aborted, true);
      const t1 = Date.now();
      assert.equal((await fetch(srv.url + '/per-route')).status, 503);
      assert.ok(Date.now() - t1 < 1000);
    } finally {
      await srv.close();
    }
  });
});

describe('errors', () => {
  test('sync throw, async rejection and non-Error throws never crash; 500 hides details', async () => {
    const { entries, logger } = recordingLogger();
    const app = new App({ logger });
    app.get('/sync', () => {
      throw new Error('secret detail');
    });
    app.get('/async', async () => {
      await sleep(1);
      throw new Error('async detail');
    });
    app.get('/string', () => {
      throw 'a string';
    });
    app.get('/null', () => {
      throw null;
    });
    const srv = await start(app);
    try {
      for (const p of ['/sync', '/async', '/string', '/null']) {
        const r = await fetch(srv.url + p);
        assert.equal(r.status, 500, p);
        const body = await r.json();
        assert.deepEqual(body, { error: 'Internal Server Error' }, p);
      }
      assert.equal(entries.filter((e) => e.level === 'error').length, 4);
      assert.equal(await (await fetch(srv.url + '/nothing-here')).status, 404, 'process still serving');
    } finally {
      await srv.close();
    }
  });

  test('exposeErrors shows message and stack (development)', async () => {
    const app = new App({ exposeErrors: true, logger: silentLogger });
    app.get('/', () => {
      throw new Error('visible');
    });
    const srv = await start(app);
    try {
      const body = await (await fetch(srv.url + '/')).json();
      assert.equal(body.message, 'visible');
      assert.match(body.stack, /visible/);
    } finally {
      await srv.close();
    }
  });

  test('router error handlers run before the app handler; a throwing handler passes outward', async () => {
    const app = new App({ logger: silentLogger });
    const api = new Router();
    api.get('/handled', () => {
      throw new HttpError(400, 'bad');
    });
    api.get('/rethrown', () => {
      throw new Error('inner');
    });
    api.error((err, req, res) => {
      if (err.message === 'inner') throw new HttpError(502, 'wrapped');
      res.status(err.status).json({ router: err.message });
    });
    app.attach('/api', api);
    app.get('/top', () => {
      throw new HttpError(403, 'top');
    });
    app.error((err, req, res) => res.status(err.status ?? 500).json({ app: err.message }));
    const srv = await start(app);
    try {
      let r = await fetch(srv.url + '/api/handled');
      assert.equal(r.status, 400);
      assert.deepEqual(await r.json(), { router: 'bad' });
      r = await fetch(srv.url + '/api/rethrown');
      assert.equal(r.status, 502);
      assert.deepEqual(await r.json(), { app: 'wrapped' });
      r = await fetch(srv.url + '/top');
      assert.deepEqual(await r.json(), { app: 'top' });
    } finally {
      await srv.close();
    }
  });

  test('an error handler that itself fails falls back to the default answer', async () => {
    const app = new App({ logger: silentLogger });
    app.get('/', () => {
      throw new HttpError(422, 'unprocessable');
    });
    app.error(async () => {
      throw new Error('handler broke');
    });
    const srv = await start(app);
    try {
      const r = await fetch(srv.url + '/');
      assert.equal(r.status, 500);
    } finally {
      await srv.close();
    }
  });

  test('an error after streaming began closes the connection instead of sending a second response', async () => {
    const app = new App({ logger: silentLogger });
    app.get('/', (req, res) =>
      res.stream(
        Readable.from(
          (async function* () {
            yield 'partial ';
            await sleep(5);
            throw new Error('source failed');
          })(),
        ),
      ),
    );
    const srv = await start(app);
    try {
      const r = await fetch(srv.url + '/');
      await assert.rejects(r.text());
      assert.equal((await fetch(srv.url + '/missing')).status, 404);
    } finally {
      await srv.close();
    }
  });
});
