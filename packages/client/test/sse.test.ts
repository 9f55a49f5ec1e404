// The fallback transport's reader (src/sse.ts) against a real HTTP server that sends a bad
// stream: what a WebSocket would give (a close code 1000..4999, a string reason, 1006 for a
// session that never opened), never a value of the wrong type. Fuzz target:
// fuzz/targets/fallback-frames.mjs.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, test } from 'node:test';
import { SseSocket } from '../src/sse.ts';

let server: Server;
let base = '';
before(async () => {
  server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const session = req.url === '/bad-session' ? '{"session":1,"maxPost":"a","idle":-1}' : '{"session":"s","maxPost":65537,"idle":0}';
    res.write(`event: session\ndata: ${session}\n\n`);
    if (req.url === '/bad-close') res.end('data: hello\n\nevent: close\ndata: {"code":"x","reason":5}\n\n');
    else if (req.url === '/null-close') res.end('event: close\ndata: null\n\n');
    else res.end('event: close\ndata: {"code":4000,"reason":"bye"}\n\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
after(() => server.close());

function run(path: string) {
  const s = new SseSocket(base + path);
  const got = { opened: false, messages: [] as unknown[], closes: [] as { code: unknown; reason: unknown }[] };
  s.onopen = () => void (got.opened = true);
  s.onmessage = (ev: { data: unknown }) => void got.messages.push(ev.data);
  return new Promise<typeof got>((resolve) => {
    s.onclose = (ev: { code: unknown; reason: unknown }) => {
      got.closes.push(ev);
      setTimeout(() => resolve(got), 20);
    };
  });
}

test('a well-formed stream: open, then the close frame as sent', async () => {
  const got = await run('/good');
  assert.equal(got.opened, true);
  assert.deepEqual(got.closes, [{ code: 4000, reason: 'bye' }]);
});

test('Fuzz finding (fallback-frames): a close frame whose code is not a number gives 1005 and an empty reason, not "x" and 5', async () => {
  const got = await run('/bad-close');
  assert.deepEqual(got.messages, ['hello']);
  assert.deepEqual(got.closes, [{ code: 1005, reason: '' }]);
});

test('a close frame of null: 1005, once', async () => {
  assert.deepEqual((await run('/null-close')).closes, [{ code: 1005, reason: '' }]);
});

test('a session event with fields of the wrong types never opens: 1006, as a WebSocket that could not connect', async () => {
  const got = await run('/bad-session');
  assert.equal(got.opened, false);
  assert.deepEqual(got.closes, [{ code: 1006, reason: '' }]);
});
