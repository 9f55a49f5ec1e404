// Type tests for the realtime contract: typed topics (`app.topic` with `events`) type
// `app.publish` and `ws.publish`, and `app.ws` records its events with their data and reply
// schemas under `'~ws'` for typed clients. Every @ts-expect-error line must be an error.
import { App, type TopicsOf, type WsRoutesOf, type TopicEventsFor, type WsEventContract } from '@tachyon/server';
import { z } from 'zod';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_ok: T) => {};

const Chat = z.object({ text: z.string(), from: z.string() });
const Joined = z.object({ user: z.string() });
const Send = z.object({ room: z.string(), text: z.string() });
const Ack = z.object({ ok: z.boolean() });

const app = new App()
  .topic('room:*', { events: { chat: Chat, joined: Joined }, history: { size: 10 } })
  .topic('ticker', { events: { tick: z.number() } })
  .topic('plain:*', { presence: true }) // no events: stays untyped
  .ws('/live', {
    upgrade: () => ({ user: 'ada' }),
    events: {
      'chat:send': {
        schema: Send,
        reply: Ack,
        handler: (ws, data) => {
          expectType<Equal<typeof data, { room: string; text: string }>>(true);
          expectType<Equal<typeof ws.data, { user: string }>>(true);
          ws.publish(`room:${data.room}`, 'chat', { text: data.text, from: ws.data.user });
          // @ts-expect-error: chat needs `from`
          ws.publish(`room:${data.room}`, 'chat', { text: data.text });
          // @ts-expect-error: not an event of room:*
          ws.publish('room:1', 'left', {});
          ws.publish('elsewhere', 'anything', 42); // undeclared topic: untyped
          return { ok: true };
        },
      },
      typing: { schema: z.object({ room: z.string() }), handler: () => {} },
      'who:am:i': { reply: z.object({ user: z.string() }), handler: async (ws) => ({ user: ws.data.user }) },
      // @ts-expect-error: the handler's return does not fit `reply`
      bad: { reply: Ack, handler: () => ({ ok: 'yes' }) },
    },
  });

// ----- app.publish -----------------------------------------------------------------------------
app.publish('room:1', 'chat', { text: 'hi', from: 'ada' });
app.publish('room:1', 'joined', { user: 'ada' }, { volatile: false });
app.publish('ticker', 'tick', 1);
app.publish('plain:1', 'whatever', { any: 'thing' });
app.publish('other', 'x');
declare const room: string;
app.publish(`room:${room}`, 'joined', { user: room });
// @ts-expect-error: wrong data for chat
app.publish('room:1', 'chat', { text: 1, from: 'ada' });
// @ts-expect-error: data is required
app.publish('room:1', 'chat');
// @ts-expect-error: undeclared event of a typed topic
app.publish('room:1', 'chatt', { text: 'hi', from: 'ada' });
// @ts-expect-error: tick is a number
app.publish('ticker', 'tick', '1');

// ----- what the type carries ------------------------------------------------------------------
type Topics = TopicsOf<typeof app>;
expectType<Equal<keyof Topics, 'room:*' | 'ticker'>>(true);
expectType<Equal<TopicEventsFor<Topics, 'room:42'>, { readonly chat: typeof Chat; readonly joined: typeof Joined }>>(true);
expectType<Equal<TopicEventsFor<Topics, 'nope'>, never>>(true);
type Live = WsRoutesOf<typeof app>['/live'];
export const contract: WsEventContract<typeof Send, typeof Ack> = null! as Live['chat:send'];
expectType<Equal<Live['typing']['reply'], unknown>>(true); // no reply schema
expectType<Equal<keyof Live, 'chat:send' | 'typing' | 'who:am:i' | 'bad'>>(true);

// Events whose only member is a handler with untyped parameters are recorded too (any data).
const untyped = new App().ws('/u', { events: { say: { handler: (ws, data) => ws.publish('room', 'said', data) } } });
expectType<Equal<keyof WsRoutesOf<typeof untyped>['/u'], 'say'>>(true);
expectType<Equal<WsRoutesOf<typeof untyped>['/u']['say']['schema'], unknown>>(true);

// A path only known at run time is not recorded; explicit type arguments keep working.
declare const somePath: string;
const dynamic = new App().ws(somePath, { events: { a: { handler: () => 1 } } });
expectType<Equal<WsRoutesOf<typeof dynamic>, {}>>(true);
const explicit = new App().ws<{ id: number }>('/x', { upgrade: () => ({ id: 1 }), open: (ws) => ws.data.id });
expectType<Equal<WsRoutesOf<typeof explicit>, {}>>(true);
expectType<Equal<Live['chat:send']['schema'], typeof Send>>(true);
expectType<Equal<Live['chat:send']['reply'], typeof Ack>>(true);
