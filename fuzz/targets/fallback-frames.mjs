// The fallback transport's session frames (docs/realtime.md, "Fallback transport"): the
// server's SSE encoding of a frame (sseEvent, realtime/fallback/connection.ts) and the client's
// reader of the stream (SseSocket, packages/client/src/sse.ts), fed through a stand-in fetch.
// Properties: encode → read gives every frame back, in order (line breaks as \n); any bytes as
// the stream, cut anywhere, never throw out of the socket, close it exactly once with a numeric
// code and a string reason, and hand the listener strings only, and only once the session is
// open.
import { sseEvent } from '../../packages/server/src/realtime/fallback/connection.ts';
import { SseSocket } from '../../packages/client/src/sse.ts';
import { assert, timedAsync } from '../lib.mjs';

const SESSION = 'event: session\ndata: {"session":"s","maxPost":65537,"idle":0}\n\n';
const CLOSE = 'event: close\ndata: {"code":4000,"reason":"bye"}\n\n';

// The stream a GET gets: the chunks of the read under way. Like a real fetch, an abort errors
// the body (the socket aborts when it reads a close frame), so no stream outlives its read.
let pending = [];
globalThis.fetch = async (url, init) => {
  if (init?.method === 'POST') return new Response(null, { status: 204 });
  const chunks = pending;
  const body = new ReadableStream({
    start(c) {
      init?.signal?.addEventListener('abort', () => c.error(new DOMException('aborted', 'AbortError')), { once: true });
    },
    pull(c) {
      if (chunks.length === 0) c.close();
      else c.enqueue(chunks.shift());
    },
  });
  return new Response(body);
};

/** Reads `chunks` as the SSE stream; resolves with what the socket handed out. */
function read(chunks) {
  pending = chunks;
  return new Promise((resolve) => {
    const s = new SseSocket('http://fuzz.invalid/live');
    const got = { messages: [], closes: [], openedFirst: true, opened: false };
    s.onopen = () => void (got.opened = true);
    s.onmessage = (ev) => {
      if (!got.opened) got.openedFirst = false;
      got.messages.push(ev.data);
    };
    s.onclose = (ev) => {
      got.closes.push(ev);
      // A second close would come in a later microtask: wait one turn before resolving.
      setImmediate(() => resolve(got));
    };
  });
}

export async function fuzz(data) {
  // Encode → read: the input split on NUL bytes is the frames the server sends.
  const frames = data.toString('utf8').split('\0').slice(0, 32);
  const stream = SESSION + frames.map(sseEvent).join('') + CLOSE;
  const cut = data.length === 0 ? 1 : 1 + (data[0] % 7);
  const bytes = Buffer.from(stream);
  const chunks = [];
  for (let i = 0; i < bytes.length; i += cut) chunks.push(new Uint8Array(bytes.subarray(i, i + cut)));
  const back = await timedAsync('encode → read', () => read(chunks.slice()));
  assert(back.closes.length === 1 && back.closes[0].code === 4000 && back.closes[0].reason === 'bye', 'the close frame closes it once');
  const expected = frames.map((f) => f.replace(/\r\n|\r/g, '\n'));
  assert(JSON.stringify(back.messages) === JSON.stringify(expected), 'every frame comes back as sent, in order');

  // Any bytes as the stream (after a session, or not), cut where the first byte says.
  for (const prefix of ['', SESSION]) {
    const raw = Buffer.concat([Buffer.from(prefix), data]);
    const parts = [];
    for (let i = 0; i < raw.length; i += cut * 3) parts.push(new Uint8Array(raw.subarray(i, i + cut * 3)));
    const got = await timedAsync('read', () => read(parts.slice()));
    assert(got.closes.length === 1, 'closed exactly once');
    const { code, reason } = got.closes[0];
    assert(Number.isInteger(code) && code >= 1000 && code <= 4999, `a close code (got ${JSON.stringify(code)})`);
    assert(typeof reason === 'string', `a string reason (got ${JSON.stringify(reason)})`);
    assert(
      got.messages.every((m) => typeof m === 'string'),
      'messages are strings',
    );
    assert(got.openedFirst, 'no message before the session opens');
  }
}
