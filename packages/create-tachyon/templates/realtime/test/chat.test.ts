// `npm test`: the page and the client over app.request(); the chat over real WebSockets.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connect, type WsContract } from '@tachyon/client';
import type { Server } from '@tachyon/server';
import { createApp, type Chat, type ChatMessage } from '../src/app.ts';

/** The route's requests and the room topics' events, from the app's type (src/app.ts). */
type Contract = WsContract<Chat, '/chat'>;

const app = createApp();
let server: Server;
let url: string;
before(async () => {
  server = await app.listen({ port: 0, host: '127.0.0.1' });
  url = `ws://127.0.0.1:${server.port}/chat`;
});
after(() => server.close({ timeout: 1000 }));

test('serves the page and the browser client', async () => {
  const page = await app.request('/');
  assert.equal(page.status, 200);
  assert.match(await page.text(), /\/tachyon\/client\.js/);
  const client = await app.request('/tachyon/client.js');
  assert.equal(client.status, 200);
  assert.match(client.headers.get('content-type') ?? '', /javascript/);
});

test('a message reaches everyone in the room, and only them', async () => {
  const alice = connect<Contract>(url);
  const bob = connect<Contract>(url);
  const carol = connect<Contract>(url);
  const bobGot: ChatMessage[] = [];
  const carolGot: ChatMessage[] = [];
  bob.on('room:lobby', 'message', (m) => bobGot.push(m));
  carol.on('room:elsewhere', 'message', (m) => carolGot.push(m));
  await Promise.all([alice.ready, bob.ready, carol.ready]);
  await waitFor(async () => (await (await app.request('/rooms/lobby')).json()).online === 1);

  assert.deepEqual(await alice.request('say', { room: 'lobby', name: 'alice', text: ' hi ' }), { ok: true });
  await waitFor(() => bobGot.length === 1);
  assert.equal(bobGot[0]!.name, 'alice');
  assert.equal(bobGot[0]!.text, 'hi'); // trimmed by the schema
  assert.equal(carolGot.length, 0);
  for (const c of [alice, bob, carol]) c.close();
});

test('a bad message is refused with a validation error, the socket stays open', async () => {
  const alice = connect<Contract>(url);
  await alice.ready;
  await assert.rejects(alice.request('say', { room: 'Not A Room', name: 'alice', text: 'hi' }));
  await assert.rejects(alice.request('say', { room: 'lobby', name: 'alice', text: '' }));
  assert.deepEqual(await alice.request('say', { room: 'lobby', name: 'alice', text: 'still here' }), { ok: true });
  alice.close();
});

test('the contract types the calls: wrong ones fail `npm run typecheck`', () => {
  // Type-only checks: never called, so nothing is sent.
  const never = (live: ReturnType<typeof connect<Contract>>) => {
    // @ts-expect-error: no such event
    void live.request('shout', { room: 'lobby' });
    // @ts-expect-error: `say` needs a name
    void live.request('say', { room: 'lobby', text: 'hi' });
    // @ts-expect-error: a room's messages have no `user`
    live.on('room:lobby', 'message', (m) => m.user);
  };
  assert.equal(typeof never, 'function');
});

async function waitFor(check: () => boolean | Promise<boolean>, ms = 2000): Promise<void> {
  for (const end = Date.now() + ms; !(await check()); await new Promise((r) => setTimeout(r, 10))) {
    if (Date.now() > end) throw new Error('timed out');
  }
}
