// Hook order over real requests: a plain success, a validation failure, a thrown error, 404,
// 405, a client abort, a handler timeout and a WebSocket event (docs/hooks.md).
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { App, HttpError, type HttpHooks } from '../../src/index.ts';
import { eventually, openWs, rawWebSocket, recordingLogger, sleep, start, statusOf } from '../helpers.ts';

/** An app whose every HTTP hook appends its name (and what it saw) to `seen`. */
function tracedApp(options: ConstructorParameters<typeof App>[0] = {}) {
  const seen: string[] = [];
  const app = new App(options);
  app.addHook('onRequest', () => void seen.push('onRequest'));
  app.use((_req, _res, next) => {
    seen.push('middleware');
    return next();
  });
  app.addHook('preValidation', () => void seen.push('preValidation'));
  app.addHook('preHandler', () => void seen.push('preHandler'));
  app.addHook('onSend', () => void seen.push('onSend'));
  app.addHook('onError', (err) => void seen.push(`onError:${(err as { status?: number }).status ?? 500}`));
  app.addHook('onTimeout', () => void seen.push('onTimeout'));
  app.addHook('onAbort', () => void seen.push('onAbort'));
  app.addHook('onResponse', (_req, _res, info) => void seen.push(`onResponse:${info.status}${info.aborted ? ':aborted' : ''}`));
  return { app, seen };
}

describe('HTTP hook order', () => {
  test('a plain success: onRequest, middleware, preValidation, preHandler, handler, onSend, onResponse', async () => {
    const { app, seen } = tracedApp();
    app.get('/ok', () => {
      seen.push('handler');
      return { ok: true };
    });
    const res = await app.request('/ok');
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { ok: true });
    assert.deepEqual(seen, ['onRequest', 'middleware', 'preValidation', 'preHandler', 'handler', 'onSend', 'onResponse:200']);
    await app.close();
  });

  test('a validation failure: the handler and preHandler never run; onError, onSend, onResponse 400', async () => {
    const { app, seen } = tracedApp();
    app.get('/n', { query: z.object({ n: z.coerce.number() }) }, () => void seen.push('handler'));
    const res = await app.request('/n?n=abc');
    assert.equal(res.status, 400);
    assert.deepEqual(seen, ['onRequest', 'middleware', 'preValidation', 'onError:400', 'onSend', 'onResponse:400']);
    await app.close();
  });

  test('a thrown error: onError before the error handler answers, then onSend, onResponse 500', async () => {
    const { app, seen } = tracedApp();
    app.error((err, _req, res) => {
      seen.push('error handler');
      res.status(500).json({ error: String((err as Error).message) });
    });
    app.get('/boom', () => {
      seen.push('handler');
      throw new Error('kaput');
    });
    const res = await app.request('/boom');
    assert.equal(res.status, 500);
    assert.deepEqual(await res.json(), { error: 'kaput' });
    assert.deepEqual(seen, [
      'onRequest',
      'middleware',
      'preValidation',
      'preHandler',
      'handler',
      'onError:500',
      'error handler',
      'onSend',
      'onResponse:500',
    ]);
    await app.close();
  });

  test('404 and 405 go through the app hooks too', async () => {
    const { app, seen } = tracedApp();
    app.get('/only-get', () => 'x');
    assert.equal((await app.request('/nowhere')).status, 404);
    assert.deepEqual(seen.splice(0), ['onRequest', 'middleware', 'preValidation', 'preHandler', 'onError:404', 'onSend', 'onResponse:404']);
    assert.equal((await app.request('/only-get', { method: 'DELETE' })).status, 405);
    assert.deepEqual(seen, ['onRequest', 'middleware', 'preValidation', 'preHandler', 'onError:405', 'onSend', 'onResponse:405']);
    await app.close();
  });

  test('a client abort: onAbort, then onResponse with aborted: true; no onSend', async () => {
    const { app, seen } = tracedApp();
    let entered!: () => void;
    const inHandler = new Promise<void>((r) => (entered = r));
    app.get('/slow', async (req) => {
      seen.push('handler');
      entered();
      await new Promise((r) => req.signal.addEventListener('abort', r));
      return 'late';
    });
    const srv = await start(app);
    const socket = connect(srv.port, '127.0.0.1');
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await inHandler;
    socket.destroy();
    await eventually(() => seen.includes('onResponse:200:aborted'));
    assert.deepEqual(seen, ['onRequest', 'middleware', 'preValidation', 'preHandler', 'handler', 'onAbort', 'onResponse:200:aborted']);
    await srv.close();
  });

  test('a handler timeout: onTimeout, onError 503, onSend, onResponse 503', async () => {
    const { app, seen } = tracedApp();
    app.get('/stuck', { timeout: 30 }, () => {
      seen.push('handler');
      return new Promise(() => {});
    });
    const res = await app.request('/stuck');
    assert.equal(res.status, 503);
    assert.deepEqual(seen, [
      'onRequest',
      'middleware',
      'preValidation',
      'preHandler',
      'handler',
      'onTimeout',
      'onError:503',
      'onSend',
      'onResponse:503',
    ]);
    await app.close();
  });

  test('route hooks run after the app hooks; async hooks are awaited in order', async () => {
    const seen: string[] = [];
    const app = new App();
    app.addHook('preHandler', async () => {
      await sleep(5);
      seen.push('app');
    });
    const routeHook: HttpHooks['preHandler'] = () => void seen.push('route 1');
    app.get(
      '/r',
      { hooks: { preHandler: [routeHook, async () => void seen.push('route 2')], onRequest: () => void seen.push('route onRequest') } },
      () => {
        seen.push('handler');
        return 'ok';
      },
    );
    app.get('/plain', () => 'plain');
    assert.equal(await (await app.request('/r')).text(), 'ok');
    assert.deepEqual(seen, ['route onRequest', 'app', 'route 1', 'route 2', 'handler']);
    seen.length = 0;
    assert.equal(await (await app.request('/plain')).text(), 'plain');
    assert.deepEqual(seen, ['app'], 'route hooks belong to their route');
    await app.close();
  });

  test('a hook that answers ends the chain: later hooks and the handler do not run, onSend and onResponse do', async () => {
    const seen: string[] = [];
    const app = new App();
    app.addHook('onRequest', (req, res) => {
      if (req.header('x-key') !== 'secret') res.status(401).json({ error: 'no key' });
    });
    app.addHook('preHandler', () => void seen.push('preHandler'));
    app.addHook('onSend', () => void seen.push('onSend'));
    app.addHook('onResponse', (_q, _s, info) => void seen.push(`onResponse:${info.status}`));
    app.get('/secret', () => 'in');
    assert.equal((await app.request('/secret')).status, 401);
    assert.deepEqual(seen.splice(0), ['onSend', 'onResponse:401']);
    assert.equal(await (await app.request('/secret', { headers: { 'x-key': 'secret' } })).text(), 'in');
    assert.deepEqual(seen, ['preHandler', 'onSend', 'onResponse:200']);
    await app.close();
  });

  test('onResponse gets status, body bytes and a duration', async () => {
    const infos: { status: number; bytes: number; duration: number }[] = [];
    const app = new App();
    app.addHook('onResponse', (_q, _s, info) => void infos.push(info));
    app.get('/hello', () => 'hello');
    app.get('/wait', async () => {
      await sleep(20);
      return 'done';
    });
    await (await app.request('/hello')).text();
    await (await app.request('/wait')).text();
    assert.equal(infos[0]!.status, 200);
    assert.equal(infos[0]!.bytes, 5);
    assert.ok(infos[1]!.duration >= 15, `duration ${infos[1]!.duration}`);
    await app.close();
  });
});

describe('WebSocket hook order', () => {
  test('onUpgrade, onOpen, onEvent, the event handler, onSocketClose; onEvent may refuse', async () => {
    const seen: string[] = [];
    const app = new App();
    app.decorateRequest('tenant' as never, 'none' as never);
    app.addHook('onUpgrade', (req) => void seen.push(`onUpgrade ${req.path} ${(req as unknown as { tenant: string }).tenant}`));
    app.addHook('onOpen', () => void seen.push('onOpen'));
    app.addHook('onEvent', (_ws, event) => {
      seen.push(`onEvent ${event}`);
      return event !== 'forbidden';
    });
    app.addHook('onSocketClose', (_ws, code) => void seen.push(`onSocketClose ${code}`));
    app.ws('/live', {
      upgrade: () => {
        seen.push('upgrade');
        return { user: 'ann' };
      },
      open: () => void seen.push('open'),
      hooks: { onEvent: async () => void seen.push('route onEvent') },
      events: {
        hello: { handler: (_ws, data) => (seen.push('handler'), { echo: data }) },
        forbidden: { handler: () => void seen.push('never') },
      },
      close: () => void seen.push('close'),
    });
    const srv = await start(app);
    const client = await openWs(`ws://127.0.0.1:${srv.port}/live`);
    client.ws.send(JSON.stringify({ type: 'event', event: 'hello', data: 1, ref: 1 }));
    assert.deepEqual((await client.next((m) => m.ref === 1)).data, { echo: 1 });
    client.ws.send(JSON.stringify({ type: 'event', event: 'forbidden', ref: 2 }));
    const refused = await client.next((m) => m.ref === 2);
    assert.equal(refused.type, 'error');
    assert.match(refused.message, /refused/);
    client.ws.close(1000);
    await eventually(() => seen.includes('close'));
    assert.deepEqual(seen, [
      'onUpgrade /live none',
      'upgrade',
      'onOpen',
      'open',
      'onEvent hello',
      'route onEvent',
      'handler',
      'onEvent forbidden',
      'onSocketClose 1000',
      'close',
    ]);
    await srv.close();
  });

  test('onUpgrade returning false refuses with 403; a throwing onUpgrade is answered, not a crash', async () => {
    const { entries, logger } = recordingLogger();
    const app = new App({ logger });
    app.addHook('onUpgrade', (req) => {
      if (req.query.token === 'bad') return false;
      if (req.query.token === 'throw') throw new Error('hook bug');
      if (req.query.token === 'http') throw new HttpError(429, 'slow down');
    });
    app.ws('/live', {});
    const srv = await start(app);
    try {
      const status = async (token: string) => statusOf((await rawWebSocket(srv.port, `/live?token=${token}`)).handshake);
      assert.equal(await status('bad'), 403);
      assert.equal(await status('throw'), 500);
      assert.equal(await status('http'), 429);
      assert.ok(entries.some((e) => e.level === 'error' && String((e.obj as { err?: Error }).err?.message) === 'hook bug'));
      const ok = await openWs(`ws://127.0.0.1:${srv.port}/live?token=good`);
      ok.ws.close();
    } finally {
      await srv.close();
    }
  });
});
