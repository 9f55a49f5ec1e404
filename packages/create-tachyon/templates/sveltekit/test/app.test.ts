// `npm test` builds the app (vite build), then runs the production server (`node build`) on a
// free port and talks to it as a browser would: a page, a form action, the WebSocket route.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { connect } from '@tachyon/client';
import { ROOM, type ChatMessage } from '../src/lib/chat.ts';

let base = '';
const server = spawn(process.execPath, ['build'], {
  env: { ...process.env, PORT: '0', HOST: '127.0.0.1' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
before(async () => {
  let out = '';
  for await (const chunk of server.stdout) {
    out += chunk;
    const m = /Listening on (http:\/\/\S+)/.exec(out);
    if (m) return void (base = m[1]!);
  }
  throw new Error(`node build exited before listening:\n${out}`);
});
after(async () => {
  server.kill('SIGTERM');
  if (server.exitCode === null) await once(server, 'exit');
});

test('renders the page on the server, and /healthz', async () => {
  const page = await fetch(base);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<h1>Chat<\/h1>/);
  assert.deepEqual(await (await fetch(`${base}/healthz`)).json(), { status: 'ok' });
});

test('a message sent with the form reaches the pages subscribed over /ws', async () => {
  const live = connect<{ message: ChatMessage }>(`${base.replace('http', 'ws')}/ws`);
  const got: ChatMessage[] = [];
  live.on(ROOM, 'message', (m) => got.push(m));
  await live.ready;
  await waitFor(async () => (await fetch(base)).text().then((html) => /1 other page/.test(html)));
  const say = (body: string) =>
    fetch(`${base}/?/say`, {
      method: 'POST',
      headers: { origin: base, 'content-type': 'application/x-www-form-urlencoded', 'x-sveltekit-action': 'true' },
      body,
    });
  assert.equal((await say('name=ann&text=hello')).status, 200);
  await waitFor(() => got.length === 1);
  assert.equal(got[0]!.text, 'hello');
  const refused = await (await say('name=ann&text=')).json(); // SvelteKit answers an action's fail() with its data
  assert.equal(refused.type, 'failure');
  assert.equal(refused.status, 400);
  live.close();
});

async function waitFor(check: () => boolean | Promise<boolean>, ms = 3000): Promise<void> {
  for (const end = Date.now() + ms; !(await check()); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() > end) throw new Error('timed out');
  }
}
