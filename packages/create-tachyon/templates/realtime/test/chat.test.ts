// `npm test`: the page and the client over app.request(); the chat over real WebSockets.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connect } from '@tachyon/client';
import type { Server } from '@tachyon/server';
import { createApp, type ChatMessage } from '../src/app.ts';

type Events = { message: ChatMessage };
type Requests = { say: { data: { room: string; name: string; text: string }; reply: { ok: boolean } } };

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
  const alice = connect<Events, Requests>(url);
  const bob = connect<Events, Requests>(url);
  const carol = connect<Events, Requests>(url);
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
  const alice = connect<Events, Requests>(url);
  await alice.ready;
  await assert.rejects(alice.request('say', { room: 'Not A Room', name: 'alice', text: 'hi' }));
  await assert.rejects(alice.request('say', { room: 'lobby', name: 'alice', text: '' }));
  assert.deepEqual(await alice.request('say', { room: 'lobby', name: 'alice', text: 'still here' }), { ok: true });
  alice.close();
});

async function waitFor(check: () => boolean | Promise<boolean>, ms = 2000): Promise<void> {
  for (const end = Date.now() + ms; !(await check()); await new Promise((r) => setTimeout(r, 10))) {
    if (Date.now() > end) throw new Error('timed out');
  }
}
