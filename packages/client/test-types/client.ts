// Type tests: compiled by `tsc -p packages/client/test-types` against the built declarations
// (run `tsc -b packages/client` first). Every @ts-expect-error line must be an error.
import { ClientError, connect, type Live, type Status, type StatusInfo } from '../dist/index.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_ok: T) => {};

// The maps a server exports for its clients.
type Events = { chat: { text: string; from: string }; joined: { user: string }; tick: number };
type Requests = {
  'chat:send': { data: { room: string; text: string }; reply: { ok: boolean } };
  typing: { data: { room: string } };
  'who:am:i': { reply: { user: string } };
  maybe: { data?: { hint: string }; reply: string[] };
};

const live = connect<Events, Requests>('ws://localhost:3000/live', {
  minDelay: 250,
  maxDelay: 10_000,
  factor: 2,
  maxQueue: 100,
  timeout: 10_000,
  protocols: ['v1'],
  WebSocket,
  onError: (e) => console.error(e),
});

// ----- on(): one event of a topic, data typed from Events -------------------------------
live.on('room:1', 'chat', (data) => {
  expectType<Equal<typeof data, { text: string; from: string }>>(true);
  // @ts-expect-error: not a field of chat
  data.user;
});
live.on('room:1', 'tick', (n) => n.toFixed());
// @ts-expect-error: unknown event name
live.on('room:1', 'chatt', () => {});
// @ts-expect-error: listener expects the wrong data type
live.on('room:1', 'joined', (data: { text: string }) => data);

// ----- subscribe(): every event of a topic, (event, data) narrowed together ------------
const off = live.subscribe('room:1', (event, data) => {
  expectType<Equal<typeof event, 'chat' | 'joined' | 'tick'>>(true);
  if (event === 'chat') {
    expectType<Equal<typeof data, { text: string; from: string }>>(true);
    // @ts-expect-error: data is a chat here
    data.user;
  } else if (event === 'joined') {
    expectType<Equal<typeof data, { user: string }>>(true);
  }
});
expectType<Equal<typeof off, () => void>>(true);
live.subscribe('room:2', () => {}, { onDenied: (e) => expectType<Equal<typeof e, ClientError>>(true) });

// ----- onEvent(): direct sends --------------------------------------------------------
live.onEvent('joined', (data) => expectType<Equal<typeof data, { user: string }>>(true));
// @ts-expect-error: unknown event name
live.onEvent('welcome', () => {});

// ----- request(): data checked, reply inferred -----------------------------------------
async function requests() {
  const reply = await live.request('chat:send', { room: '1', text: 'hi' }, { timeout: 5000 });
  expectType<Equal<typeof reply, { ok: boolean }>>(true);
  const me = await live.request('who:am:i');
  expectType<Equal<typeof me, { user: string }>>(true);
  await live.request('who:am:i', undefined, { timeout: 100 });
  // retries: resent after a reconnect with an idempotency key (docs/realtime.md, "Retried requests")
  const paid = await live.request('chat:send', { room: '1', text: 'hi' }, { retries: 3, timeout: 5000 });
  expectType<Equal<typeof paid, { ok: boolean }>>(true);
  // @ts-expect-error: retries is a number
  await live.request('who:am:i', undefined, { retries: true });
  const hints = await live.request('maybe');
  expectType<Equal<typeof hints, string[]>>(true);
  await live.request('maybe', { hint: 'x' });
  // reply not declared: unknown
  const t = await live.request('typing', { room: '1' });
  expectType<Equal<typeof t, unknown>>(true);

  // @ts-expect-error: unknown event name
  await live.request('chat:sned', { room: '1', text: 'hi' });
  // @ts-expect-error: text must be a string
  await live.request('chat:send', { room: '1', text: 42 });
  // @ts-expect-error: missing text
  await live.request('chat:send', { room: '1' });
  // @ts-expect-error: data is required
  await live.request('chat:send');
  // @ts-expect-error: unknown option
  await live.request('chat:send', { room: '1', text: 'hi' }, { timeot: 5 });
  // @ts-expect-error: this event takes no data
  await live.request('who:am:i', { user: 'x' });
}

// ----- emit(): typed fire-and-forget -------------------------------------------------
expectType<Equal<ReturnType<typeof live.emit>, boolean>>(true);
live.emit('typing', { room: '1' });
live.emit('who:am:i');
// @ts-expect-error: unknown event name
live.emit('typingg', { room: '1' });
// @ts-expect-error: wrong data
live.emit('typing', { room: 1 });

// ----- raw frames, status -------------------------------------------------------------
live.sendRaw('text');
live.sendRaw(new Uint8Array([1]));
live.sendRaw(new ArrayBuffer(8));
// @ts-expect-error: not a frame
live.sendRaw(42);
live.onMessage((data) => expectType<Equal<typeof data, string | ArrayBuffer>>(true));
expectType<Equal<typeof live.status, Status>>(true);
expectType<Equal<Status, 'connecting' | 'open' | 'reconnecting' | 'closed'>>(true);
live.onStatus((status, info) => {
  expectType<Equal<typeof info, StatusInfo>>(true);
  if (status === 'closed') info.code?.toFixed();
});
expectType<Equal<typeof live.ready, Promise<void>>>(true);
// @ts-expect-error: read-only
live.status = 'open';

// ----- errors -------------------------------------------------------------------------
live.request('chat:send', { room: '1', text: 'hi' }).catch((e: unknown) => {
  if (e instanceof ClientError) {
    expectType<Equal<typeof e.code, string>>(true);
    e.issues?.map((i) => i.path.join('.') + i.message);
  }
});

// ----- interfaces work as maps too ----------------------------------------------------
interface IEvents {
  ping: { at: number };
}
interface IRequests {
  add: { data: { a: number; b: number }; reply: number };
}
const typed: Live<IEvents, IRequests> = connect<IEvents, IRequests>('ws://x');
typed.on('t', 'ping', (d) => d.at.toFixed());
async function iface() {
  const sum = await typed.request('add', { a: 1, b: 2 });
  expectType<Equal<typeof sum, number>>(true);
}

// ----- untyped: any name, unknown data ------------------------------------------------
const loose = connect('ws://x');
loose.on('t', 'anything', (d) => expectType<Equal<typeof d, unknown>>(true));
loose.subscribe('t', (event, data) => {
  expectType<Equal<typeof event, string>>(true);
  expectType<Equal<typeof data, unknown>>(true);
});
async function untyped() {
  const r = await loose.request('whatever', { any: 'thing' });
  expectType<Equal<typeof r, unknown>>(true);
  await loose.request('no-data');
}
loose.emit('x', 1);

// ----- handle(): server → client requests, typed by the third map ---------------------
type Asks = {
  confirm: { data: { question: string }; reply: boolean };
  'who:are:you': { reply: { name: string } };
  notify: { data: { text: string } };
};
const asked = connect<Events, Requests, Asks>('ws://x');
const offConfirm = asked.handle('confirm', (d) => {
  expectType<Equal<typeof d, { question: string }>>(true);
  return d.question.length > 0;
});
expectType<Equal<typeof offConfirm, () => void>>(true);
asked.handle('confirm', async () => true); // async handlers
asked.handle('who:are:you', (d) => {
  expectType<Equal<typeof d, undefined>>(true);
  return { name: 'ada' };
});
asked.handle('notify', () => 'anything'); // reply not declared: anything goes
// @ts-expect-error: unknown event name
asked.handle('confirmm', () => true);
// @ts-expect-error: wrong reply type
asked.handle('confirm', () => 'yes');
// @ts-expect-error: wrong reply type, async
asked.handle('confirm', async () => 'yes');
// @ts-expect-error: data is not a number
asked.handle('confirm', (d: number) => d > 0);
const askedLive: Live<Events, Requests, Asks> = asked;
void askedLive;
// Without the third map: any event, data unknown, any reply.
loose.handle('anything', (d) => {
  expectType<Equal<typeof d, unknown>>(true);
  return 1;
});

// ----- options ------------------------------------------------------------------------
// @ts-expect-error: unknown option
connect('ws://x', { retryDelay: 5 });
connect(() => `ws://x?token=${Math.random()}`);
connect(new URL('ws://x'));

export { requests, iface, untyped };

// ----- transports ----------------------------------------------------------------------------
connect('ws://localhost:3000/live', { transports: ['websocket', 'sse'], fallbackTimeout: 3000 });
connect('ws://localhost:3000/live', { transports: ['sse'] });
// @ts-expect-error: an unknown transport
connect('ws://localhost:3000/live', { transports: ['long-polling'] });
