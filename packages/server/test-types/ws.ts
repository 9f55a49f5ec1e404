// Type tests for WebSocket routes: ws.data from upgrade(), event data from each event's
// schema, raw messages, route options, publishing, and the bus option.
// Every @ts-expect-error line must be an error, or the compile fails.
import {
  App,
  type BinaryEvent,
  MemoryRateLimitStore,
  SocketRequestError,
  type Bus,
  type BusAnswer,
  type BusAsk,
  type PublishOptions,
  type RequestAllResult,
  type SendOptions,
  type SendResult,
  type SocketRequestErrorCode,
  type SocketRequestOptions,
  type WsRateLimit,
} from '@tachyon/server';
import { z } from 'zod';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_ok: T) => {};

const app = new App();

// WebSocket routes: ws.data from upgrade(), event data from each event's schema.
app.ws('/live', {
  upgrade: async (req) => (req.header('x-user') ? { id: 1, name: 'ada' } : false),
  open(ws) {
    expectType<Equal<typeof ws.data, { id: number; name: string }>>(true);
    // @ts-expect-error: not in the upgrade result
    ws.data.role;
  },
  events: {
    'chat:send': {
      schema: z.object({ room: z.string(), text: z.string().max(500) }),
      handler(ws, msg) {
        expectType<Equal<typeof msg, { room: string; text: string }>>(true);
        // @ts-expect-error: misspelled field
        msg.txt;
        return { ok: true };
      },
    },
    ping: { handler: (ws, data) => expectType<Equal<typeof data, unknown>>(true) },
  },
  message(ws, data, isBinary) {
    expectType<Equal<typeof data, ArrayBuffer>>(true);
    expectType<Equal<typeof isBinary, boolean>>(true);
  },
});
// @ts-expect-error: idleTimeout is a number
app.ws('/bad', { idleTimeout: '5' });
app.publish('room:1', 'chat', { text: 'hi' });
const subs: number = app.subscribers('room:1');
void subs;
// maxSubscriptions is a number of topics.
app.ws('/capped', { maxSubscriptions: 50 });
// @ts-expect-error: maxSubscriptions is a number
app.ws('/capped2', { maxSubscriptions: 'many' });

// A bus implements start, publish, interest and close (docs/realtime.md, "Buses").
const bus: Bus = {
  start(deliver) {
    deliver('room:1', '{"topic":"room:1","event":"e"}', false);
  },
  publish(topic, message, isBinary) {
    expectType<Equal<typeof isBinary, boolean>>(true);
  },
  interest(topic, interested) {
    expectType<Equal<typeof interested, boolean>>(true);
  },
  close: async () => {},
};
new App({ bus });
// @ts-expect-error: a bus needs interest()
new App({ bus: { start() {}, publish() {}, close() {} } });

// Bus.ready(): optional, a boolean (health() reads it).
const readyBus: Bus = { ...bus, ready: () => true };
new App({ bus: readyBus });
// @ts-expect-error: ready() returns a boolean
const badReady: Bus = { ...bus, ready: () => 'yes' };
void badReady;

// rateLimit: upgrades (window, max, key from the Request, a RateLimitStore) and messages per second.
app.ws('/limited', {
  rateLimit: {
    upgrades: { window: 60_000, max: 20, key: (req) => req.ip, store: new MemoryRateLimitStore() },
    messagesPerSecond: 50,
    closeAfter: 100,
  },
});
const limits: WsRateLimit = { messagesPerSecond: 10 };
app.ws('/limited2', { rateLimit: limits });
// @ts-expect-error: upgrades needs window and max
app.ws('/limited3', { rateLimit: { upgrades: { max: 1 } } });
// @ts-expect-error: messagesPerSecond is a number
app.ws('/limited4', { rateLimit: { messagesPerSecond: 'lots' } });

// Server → client requests: the reply type is the caller's (unknown by default); errors carry a code.
app.ws('/ask', {
  maxPendingRequests: 100,
  async open(ws) {
    const ok = await ws.request<boolean>('confirm', { question: 'sure?' }, { timeout: 5000 });
    expectType<Equal<typeof ok, boolean>>(true);
    const anything = await ws.request('whatever');
    expectType<Equal<typeof anything, unknown>>(true);
    expectType<Equal<typeof ws.pendingRequests, number>>(true);
    // @ts-expect-error: unknown option
    await ws.request('confirm', {}, { timeot: 5 });
    try {
      await ws.request('x');
    } catch (e) {
      if (e instanceof SocketRequestError) {
        expectType<Equal<typeof e.code, SocketRequestErrorCode>>(true);
        expectType<Equal<typeof e.event, string>>(true);
        // @ts-expect-error: not one of the codes
        if (e.code === 'TIMEOUTT') void 0;
      }
    }
    // Volatile sends: same result type.
    const r: SendResult = ws.send('cursor', { x: 1 }, { volatile: true });
    void r;
    // @ts-expect-error: volatile is a boolean
    ws.send('cursor', { x: 1 }, { volatile: 'yes' });
  },
});
expectType<Equal<SocketRequestErrorCode, 'TIMEOUT' | 'CLOSED' | 'CLIENT_ERROR' | 'NO_HANDLER' | 'TOO_MANY_REQUESTS' | 'DROPPED'>>(true);
const reqOptions: SocketRequestOptions = { timeout: Infinity };
void reqOptions;
// @ts-expect-error: maxPendingRequests is a number
app.ws('/ask2', { maxPendingRequests: 'lots' });
// Volatile publishes.
const publishOptions: PublishOptions = { volatile: true };
const sendOptions: SendOptions = { volatile: false };
void sendOptions;
const delivered: boolean = app.publish('cursors', 'move', { x: 1 }, publishOptions);
void delivered;
// @ts-expect-error: unknown option
app.publish('cursors', 'move', { x: 1 }, { volatil: true });

// Acknowledged broadcasts: replies typed by the caller, failures with their error.
async function acknowledged() {
  const all = await app.requestAll<{ seen: boolean }>('room:1', 'ack', { n: 1 }, { timeout: 2000 });
  expectType<Equal<typeof all, RequestAllResult<{ seen: boolean }>>>(true);
  for (const r of all.replies) {
    expectType<Equal<typeof r.id, string>>(true);
    expectType<Equal<typeof r.data, { seen: boolean }>>(true);
  }
  for (const m of all.missing) expectType<Equal<typeof m.error.code, SocketRequestErrorCode>>(true);
  const loose = await app.requestAll('room:1', 'ack');
  expectType<Equal<(typeof loose.replies)[number]['data'], unknown>>(true);
  // @ts-expect-error: the timeout is a number
  await app.requestAll('room:1', 'ack', {}, { timeout: '1s' });
}
void acknowledged;

// A bus that carries requestAll to other servers: askAll answers every server's lists, ids as strings.
const asking: Pick<Bus, 'askAll' | 'server'> = {
  server: '0123456789ab',
  askAll: async (ask: BusAsk): Promise<BusAnswer[]> => [{ replies: [{ id: `0123456789ab:0:1`, data: ask.data }], missing: [] }],
};
void asking;
// @ts-expect-error: an ask's timeout is a number of milliseconds
const badAsk: BusAsk = { topic: 'room', event: 'ack', timeout: '1s' };
void badAsk;
// @ts-expect-error: a missing entry has a code and a message
const badAnswer: BusAnswer = { replies: [], missing: [{ id: 'x' }] };
void badAnswer;
app.ws('/ids', { open: (ws) => expectType<Equal<typeof ws.id, number>>(true) });

// ----- fallback transport ------------------------------------------------------------------
app.ws('/sse', { fallback: true });
app.ws('/sse2', { fallback: { heartbeat: 5 } });
// @ts-expect-error: fallback is a boolean or { heartbeat }
app.ws('/sse3', { fallback: 'yes' });
// @ts-expect-error: unknown fallback option
app.ws('/sse4', { fallback: { heartbeat: 5, poll: true } });

// Binary events: `binary` is a code, or { code, decode } with decode typed on a Uint8Array;
// the handler's data is still the schema's (binary changes the frame, not the event).
app.ws('/game', {
  events: {
    'pvp:keystrokes': {
      binary: 1,
      schema: z.string().max(64),
      handler(ws, keys) {
        expectType<Equal<typeof keys, string>>(true);
      },
    },
    'pvp:cursor': {
      binary: {
        code: 2,
        decode(bytes) {
          expectType<Equal<typeof bytes, Uint8Array>>(true);
          return { x: bytes[0] ?? 0 };
        },
      },
      schema: z.object({ x: z.number() }),
      handler(ws, p) {
        expectType<Equal<typeof p, { x: number }>>(true);
      },
    },
    'pvp:plain': { binary: { code: 3 }, handler() {} },
  },
});
app.ws('/game-bad', {
  events: {
    // @ts-expect-error: a code is a number
    a: { binary: '1', handler() {} },
  },
});
app.ws('/game-bad2', {
  events: {
    // @ts-expect-error: the object form needs its code
    a: { binary: { decode: (bytes: Uint8Array) => bytes.length }, handler() {} },
  },
});
app.ws('/game-bad3', {
  events: {
    // @ts-expect-error: decode takes the bytes, not a string
    a: { binary: { code: 1, decode: (text: string) => text }, handler() {} },
  },
});
const binaryEvent: BinaryEvent = { code: 4, decode: (bytes) => bytes.byteLength };
void binaryEvent;

// `encode` answers a binary frame in bytes: it takes what the handler returns (the reply schema's type).
app.ws('/game-acks', {
  events: {
    'pvp:keystrokes': {
      binary: {
        code: 1,
        encode(accepted) {
          expectType<Equal<typeof accepted, { ok: true; typingIndex: number }>>(true);
          return Uint8Array.of(accepted.typingIndex & 0xff);
        },
      },
      schema: z.string(),
      reply: z.object({ ok: z.literal(true), typingIndex: z.number() }),
      handler: (ws, keys) => ({ ok: true as const, typingIndex: keys.length }),
    },
  },
});
app.ws('/game-acks-bad', {
  events: {
    a: {
      // @ts-expect-error: encode returns the bytes (a Uint8Array), not a string
      binary: { code: 1, encode: (n: number) => String(n) },
      reply: z.number(),
      handler: () => 1,
    },
  },
});
app.ws('/game-acks-bad2', {
  events: {
    a: {
      // @ts-expect-error: encode takes what the handler returns (a number here), not a string
      binary: { code: 1, encode: (s: string) => new TextEncoder().encode(s) },
      reply: z.number(),
      handler: () => 1,
    },
  },
});
const encoding: BinaryEvent<number> = { code: 5, encode: (n) => Uint8Array.of(n) };
void encoding;
