// `vite dev` through the adapter's Vite plugin: the same hooks.ws endpoint and
// event.platform as a build, before any build (SvelteKit 3 and SvelteKit 2).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { connect } from '@tachyon/client';
import { buildFixture, type KitVersion } from './helpers/fixture.ts';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function devServer(kit: KitVersion) {
  const dir = buildFixture(kit); // installs the fixture; the build itself is not used here
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      join(dir, 'node_modules/vite/bin/vite.js'),
      'dev',
      // Kit 2's vite.config.js has the adapter line alone; dev needs the plugin (vite.dev.config.js).
      ...(kit === 'kit2' ? ['--config', 'vite.dev.config.js'] : []),
      '--port',
      String(port),
      '--strictPort',
      '--host',
      '127.0.0.1',
    ],
    {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_ENV: 'development' },
    },
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`vite dev exited:\n${out}`);
    try {
      if ((await fetch(url + '/robots.txt')).ok) break;
    } catch {}
    if (i > 150) throw new Error(`vite dev did not answer in 30 s:\n${out}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    dir,
    output: () => out,
    async stop() {
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
    },
  };
}

for (const kit of ['kit3', 'kit2'] as const) {
  describe(`vite dev (${kit})`, { timeout: 300_000 }, () => {
    it('serves a page with event.platform and the hooks.ws route; an action publishes to it', async () => {
      const dev = await devServer(kit);
      try {
        const html = await (await fetch(dev.url + '/')).text();
        assert.match(html, /hello from ssr/);
        assert.match(html, /platform: true/);
        const live = connect(dev.url.replace('http', 'ws') + '/ws', { maxRetries: 0 });
        try {
          const hello = new Promise((resolve) => live.onEvent('hello', resolve));
          await live.ready;
          assert.deepEqual(await hello, { user: 'anonymous' });
          assert.deepEqual(await live.request('echo', 42), { echoed: 42, user: 'anonymous' });
          const got: unknown[] = [];
          live.subscribe('news', (event, data) => got.push([event, data]));
          await live.ping();
          const res = await fetch(dev.url + '/live?/publish', {
            method: 'POST',
            body: new URLSearchParams({ text: 'dev' }),
            headers: { origin: dev.url, accept: 'application/json', 'x-sveltekit-action': 'true' },
          });
          assert.equal(res.status, 200);
          for (let i = 0; i < 100 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
          assert.deepEqual(got, [['note', { text: 'dev' }]]);
        } finally {
          live.close();
        }
        // Vite's own HMR socket still works beside it (a different path and protocol).
        const hmr = new WebSocket(dev.url.replace('http', 'ws') + '/', 'vite-hmr');
        await new Promise<void>((resolve, reject) => {
          hmr.onopen = () => resolve();
          hmr.onerror = () => reject(new Error('HMR socket failed'));
        });
        hmr.close();

        // Editing hooks.ws.ts reloads it: open sockets close with 1001 and reconnect to the new hooks.
        const hooksPath = join(dev.dir, 'src', 'hooks.ws.ts');
        const original = readFileSync(hooksPath, 'utf8');
        const edited = original.replace(
          'return { echoed: data, user: ws.data.user };',
          'return { echoed: data, user: ws.data.user, version: 2 };',
        );
        assert.notEqual(edited, original, 'the fixture still has the line this test edits');
        const client = connect(dev.url.replace('http', 'ws') + '/ws');
        const closes: number[] = [];
        client.onStatus((status, info) => void (status === 'reconnecting' && info.code !== undefined && closes.push(info.code)));
        try {
          assert.deepEqual(await client.request('echo', 1), { echoed: 1, user: 'anonymous' });
          writeFileSync(hooksPath, edited);
          let reply: unknown;
          for (let i = 0; i < 300; i++) {
            reply = await client.request('echo', 2).catch(() => null);
            if ((reply as { version?: number } | null)?.version === 2) break;
            await new Promise((r) => setTimeout(r, 100));
          }
          assert.deepEqual(reply, { echoed: 2, user: 'anonymous', version: 2 }, 'the same client, reconnected, runs the edited hook');
          assert.equal(closes[0], 1001, "the old hooks' server closed the socket with 1001 (going away)");
          // A broken edit keeps the previous version serving, with the error in the log.
          writeFileSync(hooksPath, edited + '\nexport const events2 = ;\n');
          for (let i = 0; i < 100 && !/failed to reload/.test(dev.output()); i++) await new Promise((r) => setTimeout(r, 100));
          assert.match(dev.output(), /failed to reload, the previous version keeps serving/);
          assert.deepEqual(await client.request('echo', 3), { echoed: 3, user: 'anonymous', version: 2 });
        } finally {
          writeFileSync(hooksPath, original);
          client.close();
        }
      } finally {
        await dev.stop();
      }
    });
  });
}
