import assert from 'node:assert/strict';
import { get } from 'node:http';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { App } from '../src/index.ts';
import { eventually, sleep, start, type Running } from './helpers.ts';

describe('streaming responses', () => {
  let srv: Running;
  let app: App;
  let started = 0;
  let cleanedUp = 0;
  let aborts = 0;
  let sseClosed = 0;
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
          sseClosed++;
          return;
        }
        events.send('again');
      }, 5);
      setTimeout(() => {
        if (events.open) events.close();
      }, 50);
    });
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
});
