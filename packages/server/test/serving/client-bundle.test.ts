// app.client(): the browser build of @tachyon/client served by the app, and that build working.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { App } from '../../src/index.ts';
import { start, type Running } from '../helpers.ts';

describe('app.client()', () => {
  let running: Running;
  const work = mkdtempSync(join(tmpdir(), 'tachyon-client-bundle-'));
  before(async () => {
    const app = new App();
    app.client();
    app.client('/assets/live.js', { maxAge: 600 });
    app.ws('/live', {
      fallback: true,
      events: { add: { handler: (_ws, data) => (data as { a: number; b: number }).a + (data as { a: number; b: number }).b } },
    });
    running = await start(app);
  });
  after(async () => {
    await running.close();
    rmSync(work, { recursive: true, force: true });
  });

  test('serves the minified ES module with validators, revalidation and compression', async () => {
    const res = await fetch(`${running.url}/tachyon/client.js`, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/javascript/);
    assert.equal(res.headers.get('cache-control'), 'public, max-age=0');
    const etag = res.headers.get('etag');
    assert.ok(etag);
    const body = await res.text();
    assert.match(body, /export\{/, 'an ES module');
    assert.ok(body.length < 8_000 && !body.includes('\n  '), 'minified'); // 6.5 KB, the SSE transport apart (docs/client.md, Size)
    assert.match(body, /import\("\.\/tachyon-client-sse\.min\.js"\)/, 'the SSE transport is imported lazily, from beside it');
    assert.doesNotMatch(body, /event-stream/, 'and is not in the main module');
    const sse = await fetch(`${running.url}/tachyon/tachyon-client-sse.min.js`);
    assert.equal(sse.status, 200);
    assert.match(sse.headers.get('content-type')!, /^text\/javascript/);
    assert.match(await sse.text(), /text\/event-stream/);
    assert.equal((await fetch(`${running.url}/assets/tachyon-client-sse.min.js`)).status, 200, 'beside a custom path too');
    assert.equal((await fetch(`${running.url}/tachyon/tachyon-client-other.min.js`)).status, 404);

    const again = await fetch(`${running.url}/tachyon/client.js`, { headers: { 'if-none-match': etag!, 'accept-encoding': 'identity' } });
    assert.equal(again.status, 304);

    const br = await fetch(`${running.url}/tachyon/client.js`, { headers: { 'accept-encoding': 'br' } });
    assert.equal(br.headers.get('content-encoding'), 'br');
    assert.equal(await br.text(), body, 'fetch decodes it to the same module');

    const custom = await fetch(`${running.url}/assets/live.js`);
    assert.equal(custom.status, 200);
    assert.equal(custom.headers.get('cache-control'), 'public, max-age=600');
    assert.equal((await fetch(`${running.url}/tachyon/client.js/x`)).status, 404);
  });

  test('the served module connects and gets an event reply', async () => {
    const file = join(work, 'client.mjs');
    writeFileSync(file, await (await fetch(`${running.url}/tachyon/client.js`)).text());
    const { connect } = (await import(pathToFileURL(file).href)) as typeof import('@tachyon/client');
    const live = connect(`ws://127.0.0.1:${running.port}/live`);
    try {
      await live.ready;
      assert.equal(await live.request('add', { a: 2, b: 40 }), 42);
    } finally {
      live.close();
    }
  });

  test('the served module falls back to SSE with the transport served beside it', { timeout: 20_000 }, async () => {
    // Written side by side as the server serves them: the client's import("./tachyon-client-sse.min.js") finds it.
    const dir = mkdtempSync(join(work, 'sse-'));
    for (const name of ['client.js', 'tachyon-client-sse.min.js'])
      writeFileSync(join(dir, name.replace(/\.js$/, '.mjs')), await (await fetch(`${running.url}/tachyon/${name}`)).text());
    const main = join(dir, 'client.mjs');
    // Node resolves the import by its exact name: give the .mjs copy that name back.
    writeFileSync(main, readFileSync(main, 'utf8').replace('./tachyon-client-sse.min.js', './tachyon-client-sse.min.mjs'));
    const { connect } = (await import(pathToFileURL(main).href)) as typeof import('@tachyon/client');
    const live = connect(`ws://127.0.0.1:${running.port}/live`, { transports: ['sse'] });
    try {
      await live.ready;
      assert.equal(await live.request('add', { a: 1, b: 2 }), 3);
    } finally {
      live.close();
    }
  });

  test('bad paths and options are refused at once', () => {
    const app = new App();
    assert.throws(() => app.client('tachyon.js'), /literal path/);
    assert.throws(() => app.client('/x/:name'), /literal path/);
    assert.throws(() => app.client('/x/'), /literal path/);
    assert.throws(() => app.client('/x.js', { maxAge: -1 }), /maxAge/);
  });
});
