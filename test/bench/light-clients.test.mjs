// bench/lib/light-clients.mjs, the load of bench/sse-fanout.mjs and bench/ws-request.mjs: a raw
// WebSocket and an SSE reader against a real server with a `fallback: true` route. What they
// count is what the benchmarks report, so they are checked here: frames of every length form,
// several frames in one write, events cut across reads, refusals.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { App } from '../../packages/server/src/index.ts';
import { occurrenceCounter, rawWebSocket, ssePost, sseSession } from '../../bench/lib/light-clients.mjs';

let app;
let server;
let port;
before(async () => {
  app = new App();
  app.ws('/live', {
    fallback: true,
    maxPayloadLength: 256 * 1024,
    events: {
      echo: { handler: (_ws, data) => data },
      shout: { handler: (_ws, data) => void app.publish('room', 'said', data) },
    },
  });
  app.get('/plain', () => ({ ok: true }));
  server = await app.listen({ port: 0, host: '127.0.0.1' });
  port = server.port;
});
after(() => server.close());

const waitFor = async (cond, what) => {
  const end = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

test('occurrenceCounter counts each occurrence once, wherever the pieces are cut', () => {
  const needle = 'data: {"topic":"bench"';
  const text = `event: session\n\n${`${needle},"event":"x"}\n\n`.repeat(5)}:\n\n`;
  for (let cut = 0; cut <= text.length; cut++) {
    const count = occurrenceCounter(needle);
    assert.equal(count(text.slice(0, cut)) + count(text.slice(cut)), 5, `cut at ${cut}`);
  }
  const count = occurrenceCounter('aa');
  assert.equal(count('aaa') + count('a'), 2, 'an occurrence is not counted again from its own tail');
  assert.equal(occurrenceCounter(needle)('nothing here'), 0);
});

test('rawWebSocket: replies of each length form, several frames in one write, a publish', async () => {
  const frames = [];
  const ws = await rawWebSocket(port, '/live', (payload) => frames.push(JSON.parse(payload.toString())));
  const sizes = [10, 300, 70_000 - 100]; // 7-bit, 16-bit and 64-bit length forms, both ways
  ws.sendAll(sizes.map((n, i) => JSON.stringify({ type: 'event', event: 'echo', data: 'x'.repeat(n), ref: i + 1 })));
  await waitFor(() => frames.length === 3, 'three replies');
  assert.deepEqual(
    frames.map((f) => [f.type, f.ref, f.data.length]),
    sizes.map((n, i) => ['reply', i + 1, n]),
  );
  ws.send('{"type":"subscribe","topic":"room","ref":9}');
  await waitFor(() => frames.length === 4, 'subscribed');
  ws.send('{"type":"event","event":"shout","data":"hi"}');
  await waitFor(() => frames.length === 5, 'the publish');
  assert.deepEqual(frames[4], { topic: 'room', event: 'said', data: 'hi' });
  ws.close();
});

test('rawWebSocket: a refused handshake rejects, a server close reports the code', async () => {
  await assert.rejects(
    rawWebSocket(port, '/nowhere', () => {}),
    /handshake answered HTTP\/1\.1 404/,
  );
  await assert.rejects(
    rawWebSocket(port, '/plain', () => {}),
    /handshake answered HTTP\/1\.1 200/,
  );
  let closed;
  const ws = await rawWebSocket(
    port,
    '/live',
    () => {},
    (why) => (closed = why),
  );
  ws.send(`{"type":"event","event":"echo","data":"${'x'.repeat(300_000)}"}`); // over maxPayloadLength (256 KiB)
  await waitFor(() => closed !== undefined, 'the close');
  assert.match(closed, /1009|connection closed/);
});

test('sseSession: a session, a subscribe POSTed, publishes counted across reads', async () => {
  const count = occurrenceCounter('data: {"topic":"room"');
  let seen = 0;
  let text = '';
  const s = await sseSession(port, '/live', (t) => {
    text += t;
    seen += count(t);
  });
  assert.match(s.session, /^[A-Za-z0-9_-]{24}$/);
  await s.post(['{"type":"subscribe","topic":"room","ref":1}']);
  await waitFor(() => text.includes('"type":"subscribed"'), 'subscribed');
  const ws = await rawWebSocket(port, '/live', () => {});
  ws.sendAll(Array.from({ length: 50 }, (_, i) => `{"type":"event","event":"shout","data":${i}}`));
  await waitFor(() => seen === 50, `50 events (saw ${seen})`);
  ws.close();
  s.close();
});

test('sseSession and ssePost: refusals reject with the status', async () => {
  await assert.rejects(ssePost(port, '/live?session=AAAAAAAAAAAAAAAAAAAAAAAA', ['{"type":"ping"}']), /answered 404 .*UNKNOWN_SESSION/);
  await assert.rejects(
    sseSession(port, '/nowhere', () => {}),
    /answered 404/,
  );
});
