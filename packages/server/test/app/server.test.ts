import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { App, jsonLogger } from '../../src/index.ts';
import { rawRequest, recordingLogger, sleep, start, statusOf } from '../helpers.ts';

describe('listen and close', () => {
  test('port 0 picks a free port; { port, host } form; a taken port is a clear error', async () => {
    const app = new App();
    app.get('/', () => 'up');
    const server = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      assert.ok(server.port > 0);
      assert.equal(await (await fetch(`http://127.0.0.1:${server.port}/`)).text(), 'up');
      const other = new App();
      await assert.rejects(other.listen(server.port, '127.0.0.1'), /Could not listen/);
      await assert.rejects(app.listen(0), /already listening/);
      await assert.rejects(new App().listen(70000), /Invalid port/);
    } finally {
      await server.close();
    }
    await assert.rejects(fetch(`http://127.0.0.1:${server.port}/`), 'closed server refuses connections');
  });

  test('close() lets in-flight requests finish, refuses new connections, runs onClose once', async () => {
    let hooks = 0;
    const app = new App();
    app.get('/slow', async () => {
      await sleep(200);
      return 'finished';
    });
    app.onClose(() => hooks++);
    const srv = await start(app);
    const inflight = fetch(srv.url + '/slow').then((r) => r.text());
    await sleep(30);
    const closing = srv.server.close({ timeout: 2000 });
    await sleep(10);
    await assert.rejects(fetch(srv.url + '/slow'));
    assert.equal(await inflight, 'finished');
    await closing;
    await srv.server.close();
    assert.equal(hooks, 1);
  });

  test('close({ timeout }) drops requests that outlive it', async () => {
    const app = new App();
    app.get('/forever', () => new Promise(() => {}));
    const srv = await start(app);
    const pending = fetch(srv.url + '/forever').then(
      () => 'answered',
      () => 'dropped',
    );
    await sleep(30);
    const t0 = Date.now();
    await srv.server.close({ timeout: 150 });
    assert.ok(Date.now() - t0 < 1000);
    assert.equal(await pending, 'dropped');
  });

  test('invalid options are refused up front', () => {
    assert.throws(() => new App({ bodyLimit: -1 }), /bodyLimit/);
    assert.throws(() => new App({ requestTimeout: Number.NaN }), /requestTimeout/);
    assert.throws(() => new App({ maxHeaderSize: 10 }), /maxHeaderSize/);
    assert.throws(() => new App({ cookieSecret: [''] }), /cookieSecret/);
    assert.throws(() => new App({ trailingSlash: 'maybe' as never }), /trailingSlash/);
    assert.throws(() => new App({ trustProxy: -1 }), /trustProxy/);
  });
});

describe('header size limit', () => {
  test('default is 16 KiB: a 10 KiB header passes, 20 KiB gets 431', async () => {
    const app = new App();
    app.get('/', (req) => String(req.header('x-big')?.length));
    const srv = await start(app);
    try {
      const ok = await rawRequest(srv.port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(10 * 1024)}\r\n\r\n`, {
        until: /\r\n\r\n\d+/,
      });
      assert.equal(statusOf(ok), 200);
      const big = await rawRequest(srv.port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`, { until: /431/ });
      assert.equal(statusOf(big), 431);
    } finally {
      await srv.close();
    }
  });

  test('maxHeaderSize raises it (process-wide, so in a child process)', () => {
    const script = `
      import { App } from ${JSON.stringify(fileURLToPath(new URL('../../src/index.ts', import.meta.url)))};
      const app = new App({ maxHeaderSize: 64 * 1024 });
      app.get('/', (req) => String(req.header('x-big').length));
      const s = await app.listen({ port: 0, host: '127.0.0.1' });
      const r = await fetch('http://127.0.0.1:' + s.port + '/', { headers: { 'x-big': 'a'.repeat(40 * 1024) } });
      console.log(r.status, await r.text());
      let second = 'none';
      try { await new App({ maxHeaderSize: 8192 }).get('/', () => 1).listen(0); } catch (e) { second = e.message; }
      console.log(second);
      await s.close();`;
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(out.status, 0, out.stderr);
    const [first, second] = out.stdout.trim().split('\n');
    assert.equal(first, `200 ${40 * 1024}`);
    assert.match(second!, /process-wide/);
  });
});

describe('logging', () => {
  test('silent by default; a pino-style logger gets errors with the request', async () => {
    const { entries, logger } = recordingLogger();
    const app = new App({ logger });
    app.get('/boom', () => {
      throw new Error('kaboom');
    });
    const srv = await start(app);
    try {
      await (await fetch(srv.url + '/boom')).text();
      const e = entries.find((x) => x.level === 'error')!;
      assert.equal((e.obj as { err: Error }).err.message, 'kaboom');
      assert.equal((e.obj as { url: string }).url, '/boom');
      assert.ok(entries.some((x) => x.level === 'info' && /^listening on http:\/\/127\.0\.0\.1:\d+$/.test(x.msg ?? '')));
    } finally {
      await srv.close();
    }
  });

  test('jsonLogger writes one JSON line per entry', () => {
    const script = `
      import { jsonLogger } from ${JSON.stringify(fileURLToPath(new URL('../../src/index.ts', import.meta.url)))};
      const log = jsonLogger('info');
      log.info({ a: 1 }, 'hello'); log.debug('hidden'); log.error({ err: new Error('bad') }, 'failed');`;
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    const info = JSON.parse(out.stdout.trim());
    assert.equal(info.msg, 'hello');
    assert.equal(info.a, 1);
    const err = JSON.parse(out.stderr.trim());
    assert.equal(err.err.message, 'bad');
    assert.equal(typeof jsonLogger, 'function');
  });
});
