import assert from 'node:assert/strict';
import { get } from 'node:http';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { App } from '../../src/index.ts';
import { eventually, rawRequest, sleep, start, statusOf, type Running } from '../helpers.ts';

describe('streaming responses', () => {
  let srv: Running;
  let app: App;
  let started = 0;
  let cleanedUp = 0;
  let aborts = 0;
  before(async () => {
    app = new App();
    app.get('/web', (req, res) =>
      res.stream(
        new ReadableStream({
          start(c) {
            c.enqueue('a');
            c.enqueue(new TextEncoder().encode('b'));
            c.close();
          },
        }),
      ),
    );
    app.get('/iter', (req, res) =>
      res.stream(
        (async function* () {
          for (let i = 0; i < 3; i++) yield `${i}`;
        })(),
      ),
    );
    app.get('/node', (req, res) => res.stream(Readable.from(['x', 'y', 'z'])));
    // 32 MiB from a fast source: only backpressure keeps memory bounded for a slow client.
    app.get('/big', (req, res) =>
      res.type('application/octet-stream').stream(
        (async function* () {
          const chunk = Buffer.alloc(64 * 1024, 7);
          for (let i = 0; i < 512; i++) yield chunk;
        })(),
      ),
    );
    app.get('/endless', (req, res) => {
      req.signal.addEventListener('abort', () => aborts++);
      return res.stream(
        (async function* () {
          started++;
          try {
            for (;;) {
              yield Buffer.alloc(1024);
              await sleep(1);
            }
          } finally {
            cleanedUp++;
          }
        })(),
      );
    });
    app.get('/sse', (req, res) => {
      const events = res.sse({ retry: 1000 });
      events.send({ n: 1 }, { event: 'tick', id: '1' });
      events.send('line1\nline2');
      events.comment('keep-alive');
      const timer = setInterval(() => {
        if (!events.open) {
          clearInterval(timer);
          return;
        }
        events.send('again');
      }, 5);
      setTimeout(() => {
        if (events.open) events.close();
      }, 50);
    });
    app.get('/known', (req, res) =>
      res.type('application/octet-stream').stream(
        (async function* () {
          const chunk = Buffer.alloc(256 * 1024, 3);
          for (let i = 0; i < 64; i++) yield chunk; // 16 MiB with Content-Length
        })(),
        { length: 64 * 256 * 1024 },
      ),
    );
    app.get('/short', (req, res) => res.stream(Readable.from(['only this']), { length: 100 }));
    app.get('/long', (req, res) => res.stream(Readable.from(['way more than four']), { length: 4 }));
    app.get('/empty-known', (req, res) => res.stream(Readable.from([]), { length: 0 }));
    app.head('/explicit', (req, res) => res.header('x-own', '1').end('a body a HEAD must not carry'));
    app.any('/any', (req, res) => res.end('any body'));
    app.get('/no-content', (req, res) => res.status(204).end());
    srv = await start(app);
  });
  after(() => srv.close());

  test('web ReadableStream, async iterable and Node Readable', async () => {
    assert.equal(await (await fetch(srv.url + '/web')).text(), 'ab');
    assert.equal(await (await fetch(srv.url + '/iter')).text(), '012');
    assert.equal(await (await fetch(srv.url + '/node')).text(), 'xyz');
  });

  test('backpressure: a slow reader gets every byte, in order', async () => {
    const r = await fetch(srv.url + '/big');
    const reader = r.body!.getReader();
    let total = 0;
    let ok = true;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      ok &&= value.every((b) => b === 7);
      if (total < 4 * 1024 * 1024) await sleep(2); // slow at first
    }
    assert.equal(total, 32 * 1024 * 1024);
    assert.ok(ok);
  });

  test('server-sent events', async () => {
    const text = await (await fetch(srv.url + '/sse')).text();
    assert.ok(text.startsWith('retry: 1000\n\nevent: tick\nid: 1\ndata: {"n":1}\n\ndata: line1\ndata: line2\n\n: keep-alive\n\n'), text);
    assert.match(text, /data: again\n\n/);
  });

  test('client abort in the middle of a streamed response, 1000 times: no crash, no leak', async () => {
    const rounds = 1000;
    for (let i = 0; i < rounds; i++) {
      await new Promise<void>((resolve) => {
        const req = get({ port: srv.port, host: '127.0.0.1', path: '/endless' }, (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.on('error', () => resolve());
      });
    }
    await eventually(() => cleanedUp === rounds && app.inflight === 0, 5000);
    assert.equal(started, rounds);
    assert.equal(aborts, rounds, 'req.signal fired for every abort');
    assert.equal((await fetch(srv.url + '/node')).status, 200);
  });

  test('a body of known length streams with Content-Length through tryEnd, backpressure included', async () => {
    const r = await fetch(srv.url + '/known');
    assert.equal(r.headers.get('content-length'), String(16 * 1024 * 1024));
    assert.equal(r.headers.get('transfer-encoding'), null);
    const reader = r.body!.getReader();
    let total = 0;
    for (let i = 0; ; i++) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (i % 16 === 0) await sleep(1);
    }
    assert.equal(total, 16 * 1024 * 1024);
    assert.equal((await fetch(srv.url + '/empty-known')).headers.get('content-length'), '0');
  });

  test('a stream shorter or longer than its declared length drops the connection instead of lying', async () => {
    await assert.rejects(fetch(srv.url + '/short').then((r) => r.text()));
    await assert.rejects(fetch(srv.url + '/long').then((r) => r.text()));
    assert.equal((await fetch(srv.url + '/iter')).status, 200);
  });

  test('HEAD: streamed bodies report their known length or none (never a bogus one); no body on any HEAD', async () => {
    const head = (path: string) => rawRequest(srv.port, `HEAD ${path} HTTP/1.1\r\nHost: x\r\n\r\n`, { until: /\r\n\r\n/, timeout: 300 });
    const known = await head('/known');
    assert.match(known, /content-length: 16777216/i);
    const unknown = await head('/node');
    assert.equal(statusOf(unknown), 200);
    assert.doesNotMatch(unknown, /content-length/i);
    const explicit = await rawRequest(srv.port, 'HEAD /explicit HTTP/1.1\r\nHost: x\r\n\r\nGET /iter HTTP/1.1\r\nHost: x\r\n\r\n', {
      until: /012\r\n0\r\n\r\n|012$/,
      timeout: 500,
    });
    assert.match(explicit, /x-own: 1/i);
    assert.doesNotMatch(explicit, /a body a HEAD/);
    const any = await rawRequest(srv.port, 'HEAD /any HTTP/1.1\r\nHost: x\r\n\r\n', { until: /\r\n\r\n/, timeout: 300 });
    assert.match(any, /content-length: 8/i);
    assert.doesNotMatch(any, /any body/);
  });

  test('204 carries no Content-Length', async () => {
    const raw = await rawRequest(srv.port, 'GET /no-content HTTP/1.1\r\nHost: x\r\n\r\n', { until: /\r\n\r\n/, timeout: 300 });
    assert.equal(statusOf(raw), 204);
    assert.doesNotMatch(raw, /content-length/i);
  });
});
