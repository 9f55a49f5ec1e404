// Graceful shutdown with web Response bodies still streaming: a page streaming its `load`
// promises (SvelteKit) is a finite document and finishes; an event stream is ended cleanly.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { App } from '../../src/index.ts';
import { sleep, start } from '../helpers.ts';

const enc = new TextEncoder();

/** A body that sends `head` at once and `tail` after `ms`, then ends. */
function lateTail(head: string, tail: string, ms: number): ReadableStream<Uint8Array> {
  return new ReadableStream({
    async start(c) {
      c.enqueue(enc.encode(head));
      await sleep(ms);
      c.enqueue(enc.encode(tail));
      c.close();
    },
  });
}

async function readAll(res: globalThis.Response): Promise<string> {
  return await res.text();
}

describe('shutdown with streamed web Response bodies', () => {
  test('a streamed page finishes within the timeout (plain and deduplicated routes), close() waits for it', async () => {
    const app = new App();
    app.mount('/page', () => new Response(lateTail('<p>fast</p>', '<p>slow</p>', 600), { headers: { 'content-type': 'text/html' } }));
    // Anonymous GETs on a dedup route take the buffering path first (a live body then streams).
    app.get('/dedup', { dedup: true }, () => new Response(lateTail('head;', 'tail', 600)));
    const srv = await start(app);
    const page = fetch(srv.url + '/page');
    const dedup = fetch(srv.url + '/dedup');
    const [p, d] = await Promise.all([page, dedup]);
    const pText = readAll(p);
    const dText = readAll(d);
    await sleep(150);
    const started = Date.now();
    await srv.server.close({ timeout: 5000 });
    const took = Date.now() - started;
    assert.equal(await pText, '<p>fast</p><p>slow</p>');
    assert.equal(await dText, 'head;tail');
    assert.ok(took >= 300 && took < 2000, `close() took ${took} ms`);
  });

  test('an event stream returned as a web Response is ended at close()', async () => {
    const app = new App();
    let cancelled = false;
    app.mount(
      '/events',
      () =>
        new Response(
          new ReadableStream({
            start(c) {
              c.enqueue(enc.encode('data: hello\n\n'));
            },
            cancel() {
              cancelled = true;
            },
          }),
          { headers: { 'content-type': 'text/event-stream' } },
        ),
    );
    const srv = await start(app);
    const res = await fetch(srv.url + '/events');
    const reader = res.body!.getReader();
    await reader.read();
    const started = Date.now();
    await srv.server.close({ timeout: 5000 });
    assert.ok(Date.now() - started < 1000, 'close() did not wait for its timeout');
    for (;;) if ((await reader.read()).done) break; // ended cleanly, not reset
    assert.equal(cancelled, true);
  });

  test("res.stream(…, { shutdown: 'finish' }) finishes; a bad value is refused", async () => {
    const app = new App();
    let refused: unknown;
    app.get('/file', async (_req, res) => {
      await res.stream(
        (async function* () {
          yield 'one,';
          await sleep(400);
          yield 'two';
        })(),
        { shutdown: 'finish' },
      );
    });
    app.get('/bad', async (_req, res) => {
      try {
        await res.stream((async function* () {})(), { shutdown: 'later' as 'end' });
      } catch (err) {
        refused = err;
        res.status(500).send('refused');
      }
    });
    const srv = await start(app);
    const bad = await fetch(srv.url + '/bad');
    assert.equal(bad.status, 500);
    assert.match(String(refused), /TypeError: stream shutdown must be 'end' or 'finish', got later/);
    const res = await fetch(srv.url + '/file');
    const text = res.text();
    await sleep(100);
    await srv.server.close({ timeout: 5000 });
    assert.equal(await text, 'one,two');
  });
});
