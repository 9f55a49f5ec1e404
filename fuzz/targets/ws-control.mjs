// realtime/control.ts: the server's decoder of WebSocket control frames (docs/protocol.md):
// subscribe / unsubscribe (with `since` / `last`), presence, events, ping, reply. The compiled
// handler is driven directly with a recording stand-in for the socket (no server per input).
// Properties: it never throws; every answer is a JSON protocol frame of a documented type and
// error code; one subscribe frame gets at most one answer per topic (1,000 topics at most);
// event handlers only run for declared events; history requests reach the hub only well-formed.
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
    echo: { handler: (_s, data) => (ran.push('echo'), data) },
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
};
const control = compileControl(behavior, limits, log, hub);

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

export function fuzz(data) {
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
