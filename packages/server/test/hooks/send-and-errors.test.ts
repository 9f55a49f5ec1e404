// onSend replacing the payload, and hooks that fail or are declared wrong: each a clear
// error or a logged 500, never a crash.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { App } from '../../src/index.ts';
import { recordingLogger, sleep } from '../helpers.ts';

const errorsOf = (entries: { level: string; obj: unknown; msg?: string }[]) =>
  entries.filter((e) => e.level === 'error').map((e) => `${e.msg}: ${(e.obj as { err?: Error }).err?.message}`);

describe('onSend', () => {
  test('replaces the payload (sync and async, in order); undefined keeps it; Content-Length follows', async () => {
    const app = new App({ compression: false });
    app.addHook('onSend', (_req, _res, payload) => (typeof payload === 'string' ? payload.toUpperCase() : undefined));
    app.addHook('onSend', async (_req, res, payload) => {
      await sleep(5);
      res.header('x-wrapped', 'yes');
      return `[${payload}]`;
    });
    app.addHook('onSend', () => undefined);
    app.get('/text', () => 'hello');
    app.get('/json', () => ({ a: 1 }));
    const text = await app.request('/text');
    assert.equal(await text.text(), '[HELLO]');
    assert.equal(text.headers.get('content-length'), '7');
    assert.equal(text.headers.get('x-wrapped'), 'yes');
    assert.equal(await (await app.request('/json')).text(), '[{"A":1}]');
    await app.close();
  });

  test('bytes may replace a string; streams are not passed through onSend', async () => {
    const app = new App();
    let calls = 0;
    app.addHook('onSend', () => {
      calls++;
      return new TextEncoder().encode('bytes');
    });
    app.get('/b', () => 'text');
    app.get('/stream', (_req, res) => {
      res.write('a');
      res.write('b');
      res.endStream();
    });
    assert.equal(await (await app.request('/b')).text(), 'bytes');
    assert.equal(await (await app.request('/stream')).text(), 'ab');
    assert.equal(calls, 1);
    await app.close();
  });

  test('an onSend hook that throws, rejects or returns a non-body: a plain 500, logged, no loop', async () => {
    const { entries, logger } = recordingLogger();
    const app = new App({ logger });
    app.get(
      '/throws',
      {
        hooks: {
          onSend: () => {
            throw new Error('sync onSend bug');
          },
        },
      },
      () => 'x',
    );
    app.get(
      '/rejects',
      {
        hooks: {
          onSend: async () => {
            throw new Error('async onSend bug');
          },
        },
      },
      () => 'x',
    );
    app.get('/object', { hooks: { onSend: () => ({ not: 'a body' }) } }, () => 'x');
    for (const path of ['/throws', '/rejects', '/object']) {
      const res = await app.request(path);
      assert.equal(res.status, 500, path);
      assert.deepEqual(await res.json(), { error: 'Internal Server Error' });
    }
    assert.deepEqual(errorsOf(entries), [
      'onSend hook failed: answered 500: sync onSend bug',
      'onSend hook failed: answered 500: async onSend bug',
      'onSend hook failed: answered 500: an onSend hook returned object: return a string or bytes to replace the payload, or undefined to keep it',
    ]);
    assert.equal(await (await app.request('/nowhere')).status, 404, 'the app still serves');
    await app.close();
  });
});

describe('hooks that fail', () => {
  test('onRequest / preHandler that throw or reject: a 500 with a log line; the error handler sees the error', async () => {
    const { entries, logger } = recordingLogger();
    const app = new App({ logger });
    app.get(
      '/a',
      {
        hooks: {
          onRequest: () => {
            throw new Error('onRequest bug');
          },
        },
      },
      () => 'never',
    );
    app.get('/b', { hooks: { preHandler: () => Promise.reject(new Error('preHandler bug')) } }, () => 'never');
    for (const path of ['/a', '/b']) {
      const res = await app.request(path);
      assert.equal(res.status, 500);
      assert.deepEqual(await res.json(), { error: 'Internal Server Error' });
    }
    assert.deepEqual(errorsOf(entries), ['request failed: onRequest bug', 'request failed: preHandler bug']);
    await app.close();
  });

  test('onResponse, onError, onAbort and onTimeout errors are logged; the answer stands', async () => {
    const { entries, logger } = recordingLogger();
    const app = new App({ logger });
    app.addHook('onResponse', () => {
      throw new Error('onResponse bug');
    });
    app.addHook('onError', async () => {
      throw new Error('onError bug');
    });
    app.get('/ok', () => 'fine');
    app.get('/boom', () => {
      throw new Error('handler bug');
    });
    assert.equal(await (await app.request('/ok')).text(), 'fine');
    assert.equal((await app.request('/boom')).status, 500);
    await sleep(10);
    const errors = errorsOf(entries);
    assert.ok(errors.includes('onResponse hook failed: onResponse bug'), errors.join('\n'));
    assert.ok(errors.includes('onError hook failed: onError bug'), errors.join('\n'));
    assert.ok(errors.includes('request failed: handler bug'), errors.join('\n'));
    await app.close();
  });

  test("onClose hooks run in reverse order, awaited; a throwing one is logged; today's app.onClose works", async () => {
    const { entries, logger } = recordingLogger();
    const app = new App({ logger });
    const seen: string[] = [];
    app.onClose(() => void seen.push('first (onClose)'));
    app.addHook('onClose', async () => {
      await sleep(5);
      seen.push('second');
    });
    app.addHook('onClose', () => {
      seen.push('third');
      throw new Error('close bug');
    });
    await app.listen(0, '127.0.0.1');
    await app.close();
    assert.deepEqual(seen, ['third', 'second', 'first (onClose)']);
    assert.ok(errorsOf(entries).includes('onClose hook failed: close bug'));
  });

  test('onClose hooks past the shutdown timeout are not waited for (logged)', async () => {
    const { entries, logger } = recordingLogger();
    const app = new App({ logger });
    app.addHook('onClose', () => new Promise(() => {}));
    await app.listen(0, '127.0.0.1');
    const began = Date.now();
    await app.close({ timeout: 100 });
    assert.ok(Date.now() - began < 1000);
    assert.ok(entries.some((e) => e.level === 'warn' && /within the shutdown timeout/.test(e.msg ?? '')));
  });

  test('onRoute sees every route with its options; onReady runs before serving; onListen gets the address', async () => {
    const app = new App();
    const routes: string[] = [];
    const seen: string[] = [];
    app.addHook('onRoute', (route, options) => {
      routes.push(
        `${route.kind} ${'method' in route ? route.method + ' ' : ''}${'path' in route ? route.path : route.prefix}${options && 'timeout' in options ? ` timeout=${options.timeout}` : ''}`,
      );
    });
    app.addHook('onReady', async () => void seen.push('ready'));
    app.addHook('onListen', ({ port }) => void seen.push(`listening ${typeof port}`));
    app.get('/a', { timeout: 5 }, () => 'a');
    await app.register((scope) => void scope.post('/b', () => 'b'), { prefix: '/p' });
    app.ws('/live', {});
    app.mount('/svelte', () => new Response('x'));
    await app.listen(0, '127.0.0.1');
    assert.deepEqual(routes, ['http GET /a timeout=5', 'http POST /p/b', 'ws /live', 'mount /svelte']);
    assert.deepEqual(seen, ['ready', 'listening number']);
    await app.close();
  });

  test('a throwing onRoute fails the declaration (the route is not declared); a rejecting one, or a throwing onReady, fails the start', async () => {
    const app = new App();
    app.addHook('onReady', () => {
      throw new Error('not ready');
    });
    await assert.rejects(app.listen(0, '127.0.0.1'), /not ready/);

    const other = new App();
    other.get('/x', () => 'x');
    // Added late, it hears /x at once: the throw comes out of addHook.
    assert.throws(
      () =>
        other.addHook('onRoute', (route) => {
          if (route.kind === 'http' && route.path !== '/ok') throw new Error(`no route for you: ${route.path}`);
        }),
      /no route for you: \/x/,
    );
    const strict = new App();
    strict.addHook('onRoute', (route) => {
      if (route.kind === 'http' && !route.path.startsWith('/api/')) throw new Error(`routes live under /api: ${route.path}`);
    });
    strict.get('/api/a', () => 'a');
    assert.throws(() => strict.get('/b', () => 'b'), /routes live under \/api: \/b/);
    assert.deepEqual(
      strict.routes().map((r) => (r.kind === 'http' ? r.path : r.kind)),
      ['/api/a'],
      'the refused route was not declared',
    );
    assert.equal((await strict.request('/b')).status, 404);
    await strict.close();

    const later = new App();
    later.addHook('onRoute', async (route) => {
      await new Promise((r) => setTimeout(r, 5));
      if (route.kind === 'http' && route.path === '/slow') throw new Error('checked later: /slow');
    });
    later.get('/slow', () => 'x');
    await assert.rejects(later.request('/slow'), /checked later: \/slow/);
  });
});

describe('hooks declared wrong: clear errors at declaration', () => {
  test('unknown name, a non-function, a bad route hooks option, ws hooks in a scope', async () => {
    const app = new App();
    assert.throws(() => app.addHook('onBegin' as never, (() => {}) as never), /unknown hook/);
    assert.throws(() => app.addHook('onRequest', 'nope' as never), /hook "onRequest" must be a function, got string/);
    assert.throws(() => app.addHook('onClose', null as never), /must be a function, got null/);
    assert.throws(() => app.get('/x', { hooks: { onOpen: () => {} } as never }, () => 'x'), /Route GET \/x: unknown hook "onOpen"/);
    assert.throws(
      () => app.get('/x', { hooks: { preHandler: [42] } as never }, () => 'x'),
      /hook "preHandler" must be a function, got number/,
    );
    assert.throws(() => app.get('/x', { hooks: 'all' as never }, () => 'x'), /hooks must be an object/);
    assert.throws(() => app.ws('/w', { hooks: { onEvent: 'x' } as never }), /ws \/w: hook "onEvent" must be a function/);
    assert.throws(() => app.ws('/w', { hooks: { preHandler: () => {} } as never }), /ws \/w: unknown hook "preHandler"/);
    await assert.rejects(
      app.register((scope) => {
        scope.addHook('onOpen' as never, (() => {}) as never);
      }),
      /addHook\("onOpen"\): an app-level hook/,
    );
  });

  test('a hook, route, middleware or plugin added after start: a clear error', async () => {
    const app = new App();
    app.get('/', () => 'x');
    await app.request('/');
    assert.throws(() => app.addHook('onRequest', () => {}), /addHook\("onRequest"\) after the app started/);
    assert.throws(() => app.addHook('onOpen', () => {}), /after the app started/);
    assert.throws(() => app.get('/late', () => 'x'), /app.get\(\) after the app started/);
    assert.throws(() => app.use(() => {}), /use\(\) after the app started/);
    assert.throws(() => app.register(() => {}), /register\(\) after the app started/);
    assert.throws(() => app.decorateRequest('late' as never, null as never), /after the app started/);
    assert.equal(await (await app.request('/')).text(), 'x', 'still serving');
    await app.close();
  });
});
