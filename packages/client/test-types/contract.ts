// Type tests for the typed realtime client: `connect<WsContract<typeof app, '/live'>>(url)`,
// with request names, data and reply types from the server's `app.ws` events and topic
// subscriptions from its `app.topic` events. Compiled against the built declarations (server
// and client). Every @ts-expect-error line must be an error, or the compile fails.
import { App, Router, type Plugin, type RoutesOf, type WithPrefixed } from '@tachyon/server';
import { client } from '../dist/http.js';
import { z } from 'zod';
import { connect, type ContractLive, type WsContract } from '../dist/index.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_ok: T) => {};

const Chat = z.object({ text: z.string(), from: z.string() });
const app = new App()
  .topic('room:*', { events: { chat: Chat, joined: z.object({ user: z.string() }) } })
  .topic('ticker', { events: { tick: z.number(), stop: z.undefined() } })
  .topic('plain:*', { history: { size: 10 } })
  .ws('/live', {
    upgrade: () => ({ user: 'ada' }),
    events: {
      'chat:send': {
        schema: z.object({ room: z.string(), text: z.string().max(500) }),
        reply: z.object({ ok: z.boolean(), at: z.number() }),
        handler: () => ({ ok: true, at: Date.now() }),
      },
      typing: { schema: z.object({ room: z.string() }), handler: () => {} },
      whoami: { reply: z.object({ user: z.string() }), handler: (ws) => ({ user: ws.data.user }) },
      free: { handler: (_ws, data) => data },
      coerced: { schema: z.object({ n: z.string().transform(Number) }), reply: z.number(), handler: (_ws, data) => data.n },
    },
  })
  .ws('/admin', { events: { kick: { schema: z.object({ id: z.string() }), handler: () => {} } } });

const live = connect<WsContract<typeof app, '/live'>>('ws://localhost:3000/live', { timeout: 5000 });

// ----- request(): names, data and replies from the route's events ------------------------------
async function requests() {
  const sent = await live.request('chat:send', { room: '1', text: 'hi' }, { timeout: 1000 });
  expectType<Equal<typeof sent, { ok: boolean; at: number }>>(true);
  const me = await live.request('whoami');
  expectType<Equal<typeof me, { user: string }>>(true);
  const t = await live.request('typing', { room: '1' });
  expectType<Equal<typeof t, unknown>>(true); // no reply schema
  await live.request('free', { anything: 1 }); // no schema: any data
  await live.request('free');
  const n = await live.request('coerced', { n: '42' }); // the schema's input goes out (the handler gets its output)
  expectType<Equal<typeof n, number>>(true);
  // @ts-expect-error: the schema's input is a string
  await live.request('coerced', { n: 42 });
  live.emit('typing', { room: '1' });

  // @ts-expect-error: not an event of /live (it is /admin's)
  await live.request('kick', { id: '1' });
  // @ts-expect-error: text must be a string
  await live.request('chat:send', { room: '1', text: 1 });
  // @ts-expect-error: data is required
  await live.request('chat:send');
  // @ts-expect-error: the reply is not a string
  const wrong: string = await live.request('whoami');
  // @ts-expect-error: unknown event
  live.emit('typo', {});
  return wrong;
}

// ----- subscriptions: per topic, from the matching app.topic pattern ------------------------------
live.subscribe('room:1', (event, data) => {
  expectType<Equal<typeof event, 'chat' | 'joined'>>(true);
  if (event === 'chat') expectType<Equal<typeof data, { text: string; from: string }>>(true);
  else expectType<Equal<typeof data, { user: string }>>(true);
});
declare const roomId: string;
live.on(`room:${roomId}`, 'chat', (data) => expectType<Equal<typeof data, { text: string; from: string }>>(true));
live.on('ticker', 'tick', (n) => expectType<Equal<typeof n, number>>(true));
live.on('ticker', 'stop', (d) => expectType<Equal<typeof d, undefined>>(true));
// A topic declared without events, or not declared: any event, unknown data.
live.on('plain:1', 'anything', (d) => expectType<Equal<typeof d, unknown>>(true));
live.subscribe('elsewhere', (event, data) => {
  expectType<Equal<typeof event, string>>(true);
  expectType<Equal<typeof data, unknown>>(true);
});
// @ts-expect-error: not an event of room:*
live.on('room:1', 'tick', () => {});
// @ts-expect-error: chat data has no user
live.on('room:1', 'chat', (data) => data.user);

// ----- the rest of Live is there, unchanged ------------------------------------------------------
live.onStatus((status) => status);
live.handle('confirm', () => true);
live.onEvent('direct', (d) => expectType<Equal<typeof d, unknown>>(true));
expectType<
  Equal<
    typeof live,
    ContractLive<WsContract<typeof app, '/live'>['~wsContract']['requests'], typeof app extends { '~topics': infer T } ? T : never>
  >
>(true);

// ----- the contract itself --------------------------------------------------------------------
// @ts-expect-error: the app has no ws route at /nope
type NoRoute = WsContract<typeof app, '/nope'>;
// The hand-written maps still work as before.
const manual = connect<{ chat: { text: string } }, { send: { data: string; reply: number } }>('ws://x');
manual.on('any-topic', 'chat', (d) => expectType<Equal<typeof d, { text: string }>>(true));
// ----- routes of a register()ed plugin: the documented workaround (docs/typed-clients.md) --------
const userRoutes = new Router().get(
  '/:id',
  { params: z.object({ id: z.coerce.number() }), response: { 200: z.object({ name: z.string() }) } },
  () => ({
    name: 'ada',
  }),
);
const users: Plugin = (scope) => void scope.attach('/', userRoutes);
const pluginApp = new App().get('/health', () => 'ok');
void pluginApp.register(users, { prefix: '/users' });
const api = client<typeof pluginApp & WithPrefixed<'/users', RoutesOf<typeof userRoutes>>>('http://localhost:3000');
async function pluginCalls() {
  const r = await api.get('/users/:id', { params: { id: 1 } });
  if (r.ok) expectType<Equal<typeof r.data, { name: string }>>(true);
  await api.get('/health');
  // @ts-expect-error: not a route
  await api.get('/users');
}

export { requests, pluginCalls, type NoRoute };
