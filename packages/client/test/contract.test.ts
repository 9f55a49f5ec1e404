// The typed realtime client against a real server: `connect<WsContract<typeof app, '/live'>>`
// sends what the server's events accept and gets their replies; topic subscriptions get the
// events `app.topic` declares. The types are checked by tsconfig.tests.json (and
// test-types/contract.ts); here the same calls run over a real socket.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { App } from '../../server/src/index.ts';
import { ClientError, connect, type WsContract } from '../src/index.ts';
import { eventually } from './helpers.ts';

const Chat = z.object({ text: z.string().min(1), from: z.string() });

function chatApp() {
  return new App().topic('room:*', { events: { chat: Chat, joined: z.object({ user: z.string() }) }, validate: true }).ws('/live', {
    upgrade: (req) => ({ user: typeof req.query.user === 'string' ? req.query.user : 'anon' }),
    events: {
      join: {
        schema: z.object({ room: z.string() }),
        reply: z.object({ members: z.number() }),
        handler: (ws, { room }) => {
          ws.subscribe(`room:${room}`);
          ws.publish(`room:${room}`, 'joined', { user: ws.data.user });
          return { members: ws.topics.length };
        },
      },
      say: {
        schema: z.object({ room: z.string(), text: z.string() }),
        reply: z.object({ ok: z.boolean() }),
        handler: (ws, { room, text }) => ({ ok: ws.publish(`room:${room}`, 'chat', { text, from: ws.data.user }) }),
      },
      whoami: { reply: z.object({ user: z.string() }), handler: async (ws) => ({ user: ws.data.user }) },
    },
  });
}
type ChatApp = ReturnType<typeof chatApp>;

test('requests typed by the contract reach their handlers and resolve with the declared replies', async () => {
  const app = chatApp();
  const { port } = await app.listen(0, '127.0.0.1');
  const ada = connect<WsContract<ChatApp, '/live'>>(`ws://127.0.0.1:${port}/live?user=ada`);
  const bob = connect<WsContract<ChatApp, '/live'>>(`ws://127.0.0.1:${port}/live?user=bob`);
  try {
    const heard: string[] = [];
    const events: string[] = [];
    ada.on('room:1', 'chat', (data) => heard.push(`${data.from}: ${data.text}`));
    ada.subscribe('room:1', (event, data) => events.push(event === 'joined' ? `joined ${data.user}` : `chat ${data.text}`));
    assert.deepEqual(await ada.request('whoami'), { user: 'ada' });
    assert.deepEqual(await bob.request('join', { room: '1' }), { members: 1 });
    assert.deepEqual(await bob.request('say', { room: '1', text: 'hello' }), { ok: true });
    await eventually(() => heard.length === 1 && events.length === 2);
    assert.deepEqual(heard, ['bob: hello']);
    assert.deepEqual(events, ['joined bob', 'chat hello']);
  } finally {
    ada.close();
    bob.close();
    await app.close();
  }
});

test('bad input through the typed client gets the server errors: validation, a refused publish, an unknown event', async () => {
  const app = chatApp();
  const { port } = await app.listen(0, '127.0.0.1');
  const live = connect<WsContract<ChatApp, '/live'>>(`ws://127.0.0.1:${port}/live`);
  try {
    // Data the types refuse, sent anyway (a client built against an older server): VALIDATION.
    const invalid = await live.request('join', { room: 1 } as never).catch((e: unknown) => e);
    assert.ok(invalid instanceof ClientError);
    assert.equal(invalid.code, 'VALIDATION');
    assert.deepEqual(invalid.issues?.[0]?.path, ['room']);
    // Text the chat schema refuses (min 1): the topic's `validate` makes the handler throw.
    const refused = await live.request('say', { room: '1', text: '' }).catch((e: unknown) => e);
    assert.ok(refused instanceof ClientError);
    assert.equal(refused.code, 'HANDLER_ERROR');
    const unknown = await live.request('nope' as 'whoami').catch((e: unknown) => e);
    assert.ok(unknown instanceof ClientError);
    assert.equal(unknown.code, 'UNKNOWN_EVENT');
    assert.deepEqual(await live.request('whoami'), { user: 'anon' }); // the socket is still usable
  } finally {
    live.close();
    await app.close();
  }
});
