// realtime/control.ts: the server's decoder of WebSocket control frames (docs/protocol.md):
// subscribe / unsubscribe (with `since` / `last`), presence, events, ping, reply. The compiled
// handler is driven directly with a recording stand-in for the socket (no server per input).
// Properties: it never throws; every answer is a JSON protocol frame of a documented type and
// error code; one subscribe frame gets at most one answer per topic (1,000 topics at most);
// event handlers only run for declared events; history requests reach the hub only well-formed.
// The same bytes as a binary frame go to the route's binary events (binary-events.ts): a frame
// runs the event of its first byte's code or is left to the message hook, never a reply, only
// documented errors without `ref`.
import { checkBinaryEvents, compileBinaryEvents } from '../../packages/server/src/realtime/binary-events.ts';
import { compileControl } from '../../packages/server/src/realtime/control.ts';
import { isControlFrame } from '../../packages/server/src/realtime/protocol.ts';
import { assert, timed } from '../lib.mjs';

const TYPES = new Set(['error', 'denied', 'subscribed', 'unsubscribed', 'pong', 'reply']);
const CODES = new Set(['BAD_FRAME', 'UNKNOWN_EVENT', 'VALIDATION', 'HANDLER_ERROR', 'RATE_LIMITED', 'DENIED', 'NO_PRESENCE']);
const quiet = () => {};
const log = { trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet, fatal: quiet };
log.child = () => log;

let ran = [];
const behavior = {
  subscribe: (_s, topic) => !topic.startsWith('x'),
  events: {
    echo: { binary: 1, handler: (_s, data) => (ran.push('echo'), data) },
    pair: {
      binary: { code: 200, decode: (bytes) => (bytes.length === 2 ? [bytes[0], bytes[1]] : JSON.parse('x')) },
      handler: (_s, data) => ran.push(`pair ${data.length}`),
    },
    boom: {
      handler: () => {
        ran.push('boom');
        throw new Error('boom');
      },
    },
  },
};
let histories = [];
const hub = {
  presence: null,
  historyOf: (topic) => (topic.startsWith('h:') ? { size: 10 } : null),
  subscribeHistory: (s, topic, _h, request, ref) => {
    histories.push(request);
    s.subscribe(topic);
    s.sendRaw(JSON.stringify({ type: 'subscribed', topic, ...(ref === undefined ? {} : { ref }) }), false);
  },
};
const limits = {
  maxSubscriptions: 50,
  maxPendingRequests: 16,
  maxPayloadLength: 65536,
  idleTimeout: 120,
  maxBackpressure: 1 << 20,
  maxLifetime: 0,
  rateLimit: null,
  binary: checkBinaryEvents('/fuzz', behavior.events, (msg) => {
    throw new TypeError(msg);
  }),
};
const { control, event } = compileControl(behavior, limits, log, hub);
const binary = compileBinaryEvents(limits.binary, event, log);

function standIn() {
  const topics = new Set();
  return {
    sent: [],
    closed: false,
    ip: '127.0.0.1',
    _requests: null,
    get subscriptionCount() {
      return topics.size;
    },
    isSubscribed: (t) => topics.has(t),
    subscribe: (t) => topics.add(t),
    unsubscribe: (t) => topics.delete(t),
    cork(fn) {
      fn();
    },
    sendRaw(text) {
      this.sent.push(text);
    },
  };
}

/** The fuzzer's bytes as a binary frame. */
function fuzzBinary(data) {
  const ab = data.buffer.slice(data.byteOffset, data.byteOffset + data.length);
  const code = data.length === 0 ? 0 : data[0];
  const s = standIn();
  ran = [];
  const handled = timed('binary frame', () => binary(s, ab));
  assert(handled === (code === 1 || code === 200), `binary frame with code ${code}: handled ${handled}`);
  assert(s.sent.length <= 1, `${s.sent.length} answers to one binary frame`);
  for (const text of s.sent) {
    const m = JSON.parse(text);
    assert(m.type === 'error' && (m.code === 'BAD_FRAME' || m.code === 'HANDLER_ERROR') && m.ref === undefined, `answer ${text}`);
  }
  for (const name of ran) assert(name === (code === 1 ? 'echo' : 'pair 2'), `${name} ran for code ${code}`);
}

export function fuzz(data) {
  fuzzBinary(data);
  // The fuzzer's bytes after the prefix every control frame has (the server routes only those here).
  const bytes = isControlFrame(data) ? data : Buffer.concat([Buffer.from('{"type":"'), data]);
  const s = timed('control frame', () => {
    const fresh = standIn();
    ran = [];
    histories = [];
    control(fresh, bytes);
    return fresh;
  });
  let frame;
  try {
    frame = JSON.parse(bytes.toString('utf8'));
  } catch {}
  const topics = Array.isArray(frame?.topics) ? frame.topics.length : 1;
  assert(s.sent.length <= Math.max(1, topics), `${s.sent.length} answers for ${topics} topics`);
  assert(s.subscriptionCount <= limits.maxSubscriptions, 'maxSubscriptions holds');
  for (const text of s.sent) {
    const m = JSON.parse(text);
    assert(TYPES.has(m.type), `documented answer type: ${m.type}`);
    if (m.type === 'error') assert(CODES.has(m.code), `documented error code: ${m.code}`);
    if (m.ref !== undefined) assert(Number.isSafeInteger(m.ref), 'a ref is an integer');
  }
  for (const name of ran) assert(frame?.type === 'event' && frame.event === name, 'a handler only runs for its event');
  for (const h of histories) {
    if (h === null) continue;
    if (h.since)
      assert(Number.isSafeInteger(h.since.offset) && h.since.offset >= 0 && typeof h.since.epoch === 'string', 'a well-formed since');
    else assert(Number.isSafeInteger(h.last) && h.last >= 1 && h.last <= 1_000_000, 'a well-formed last');
  }
}
