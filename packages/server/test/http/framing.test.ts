// Request framing a front proxy could read differently (smuggling), the 413 close, and the
// limits of uWS's parser that Tachyon inherits (documented in docs/server.md): raw sockets.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { App } from '../../src/index.ts';
import { rawRequest, recordingLogger, sleep, start, statusOf, type Running } from '../helpers.ts';

describe('framing guard', () => {
  let running: Running;
  let canary = 0;
  const log = recordingLogger();
  before(async () => {
    const app = new App({ logger: log.logger, bodyLimit: 1024 });
    app.get('/canary', () => {
      canary++;
      return 'canary';
    });
    app.get('/h', (req) => JSON.stringify(req.header('x-test') ?? null));
    app.post('/echo', async (req) => `got ${(await req.text()).length}`);
    running = await start(app);
  });
  after(() => running.close());

  const post = (headers: string, body = '') => `POST /echo HTTP/1.1\r\nHost: x\r\n${headers}\r\n\r\n${body}`;

  test('two Content-Lengths: the request hidden in the body never runs', async () => {
    const smuggled = 'GET /canary HTTP/1.1\r\nHost: x\r\n\r\n';
    for (const lengths of [
      ['0', String(smuggled.length)],
      [String(smuggled.length), '0'],
      ['5', '5'],
    ]) {
      const raw = await rawRequest(running.port, post(lengths.map((l) => `Content-Length: ${l}`).join('\r\n'), smuggled), {
        timeout: 1000,
      });
      assert.doesNotMatch(raw, /200 OK/, `${lengths}: ${raw}`);
    }
    await sleep(50);
    assert.equal(canary, 0, 'the smuggled /canary did not execute');
    assert.ok(
      log.entries.some((e) => e.level === 'warn' && /ambiguous framing/.test(e.msg ?? '')),
      'logged',
    );
  });

  for (const [name, headers] of [
    ['chunked, identity', 'Transfer-Encoding: chunked, identity'],
    ['two TE lines', 'Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked'],
    ['xchunked', 'Transfer-Encoding: xchunked'],
    ['gzip', 'Transfer-Encoding: gzip'],
    ['TE and CL together', 'Transfer-Encoding: chunked\r\nContent-Length: 3'],
  ]) {
    test(`Transfer-Encoding ${name}: 400 and the connection closed`, async () => {
      const t0 = Date.now();
      const raw = await rawRequest(running.port, post(headers!, '3\r\nabc\r\n0\r\n\r\n'), { timeout: 3000 });
      assert.equal(statusOf(raw), 400, raw);
      assert.match(raw, /Connection: close/i);
      assert.ok(Date.now() - t0 < 2000, 'closed by the server, not by the test timeout');
    });
  }

  test('a Content-Length that is not a number: 400 and closed', async () => {
    for (const v of ['abc', '3,3', '+3', '3 3']) {
      const raw = await rawRequest(running.port, post(`Content-Length: ${v}`, 'abc'), { timeout: 3000 });
      assert.equal(statusOf(raw), 400, `${v}: ${raw}`);
    }
  });

  test('well-framed requests work, with keep-alive across them', async () => {
    const chunked = post('Transfer-Encoding: chunked', '3\r\nabc\r\n0\r\n\r\n');
    const upper = post('Transfer-Encoding: Chunked', '2\r\nab\r\n0\r\n\r\n'); // a token: case-insensitive
    const sized = post('Content-Length: 5', 'hello');
    const raw = await rawRequest(running.port, chunked + upper + sized + 'GET /canary HTTP/1.1\r\nHost: x\r\n\r\n', { until: /canary$/ });
    assert.equal(raw.match(/HTTP\/1\.1 200 OK/g)?.length, 4, raw);
    assert.match(raw, /got 3[\s\S]*got 2[\s\S]*got 5[\s\S]*canary/);
    canary = 0;
  });

  test('after a 413 the connection is closed, not drained while the client trickles', async () => {
    const socket = connect(running.port, '127.0.0.1');
    let data = '';
    socket.on('data', (d) => (data += d));
    const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
    socket.write(post('Content-Length: 100000'));
    const trickle = setInterval(() => socket.writable && socket.write('x'), 50);
    const t0 = Date.now();
    const when = await Promise.race([closed, sleep(3000).then(() => 0)]);
    clearInterval(trickle);
    socket.destroy();
    assert.equal(statusOf(data), 413, data);
    assert.ok(when > 0 && when - t0 < 1000, `closed within 1 s (took ${when ? when - t0 : '> 3000'} ms)`);
  });
});

describe('parser limits inherited from uWS (documented in docs/server.md)', () => {
  let running: Running;
  before(async () => {
    const app = new App();
    app.get('/h', (req) => JSON.stringify(req.header('x-test') ?? null));
    app.get('/ok', () => 'ok');
    app.post('/echo', async (req) => `got ${(await req.text()).length}`);
    running = await start(app);
  });
  after(() => running.close());

  test('HTTP/1.0 and absolute-form requests get 505', async () => {
    assert.equal(statusOf(await rawRequest(running.port, 'GET /ok HTTP/1.0\r\nHost: x\r\n\r\n')), 505);
    assert.equal(statusOf(await rawRequest(running.port, 'GET http://x/ok HTTP/1.1\r\nHost: x\r\n\r\n')), 505);
  });

  test('chunk extensions get 400, trailers 505', async () => {
    const chunked = (body: string) => `POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${body}`;
    assert.equal(statusOf(await rawRequest(running.port, chunked('3;x=y\r\nabc\r\n0\r\n\r\n'))), 400);
    assert.equal(statusOf(await rawRequest(running.port, chunked('3\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n'))), 505);
  });

  test('a bare CR in a header is never answered (held until the idle timeout)', async () => {
    const raw = await rawRequest(running.port, 'GET /h HTTP/1.1\r\nHost: x\r\nX-Test: a\rb\r\n\r\n', { timeout: 800 });
    assert.equal(raw, '');
  });

  test('an empty Content-Length is not seen (reads as absent), so one before a real one frames no body', async () => {
    // Documented limit: uWS's getHeader returns "" for an empty header as for a missing one,
    // and walking every request's headers to tell them apart would cost every GET.
    const raw = await rawRequest(
      running.port,
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: \r\nContent-Length: 27\r\n\r\nGET /ok HTTP/1.1\r\nHost: x\r\n\r\n',
      { until: /ok$/ },
    );
    assert.match(raw, /got 0[\s\S]*HTTP\/1\.1 200 OK[\s\S]*ok$/);
  });

  test('bytes >= 0x80 at the ends of a header value are trimmed', async () => {
    const head = Buffer.concat([
      Buffer.from('GET /h HTTP/1.1\r\nHost: x\r\nX-Test: '),
      Buffer.from([0xe9]),
      Buffer.from('ab'),
      Buffer.from([0xe9]),
      Buffer.from('\r\n\r\n'),
    ]);
    const raw = await rawRequest(running.port, head, { until: /"ab"$/ });
    assert.match(raw, /\r\n\r\n"ab"$/);
  });
});
