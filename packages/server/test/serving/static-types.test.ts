// app.static's `types` option: a build tool's own content-type record (SvelteKit's manifest)
// wins over the built-in table, over real sockets.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { App, createStatic } from '../../src/index.ts';
import { start, type Running } from '../helpers.ts';

describe('static: content types from the caller (types option)', () => {
  let dir: string;
  let running: Running;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tachyon-static-types-'));
    const text = 'x'.repeat(2000); // long enough to be worth compressing
    await writeFile(join(dir, 'data.xyz'), text);
    await writeFile(join(dir, 'notes.txt'), text);
    await writeFile(join(dir, 'style.css'), text);
    await writeFile(join(dir, 'blob.bin'), text);
    const app = new App();
    app.static('/s', dir, {
      types: { '.xyz': 'application/x-custom+json', txt: 'text/markdown; charset=utf-8', '.css': 'text/css', '.bin': '' },
    });
    running = await start(app);
  });
  after(async () => {
    await running?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const get = (path: string) => fetch(`${running.url}${path}`, { headers: { 'accept-encoding': 'br' } });

  test('an extension the built-in table lacks gets the given type, compressed when text-like', async () => {
    const r = await get('/s/data.xyz');
    assert.equal(r.headers.get('content-type'), 'application/x-custom+json');
    assert.equal(r.headers.get('content-encoding'), 'br');
    assert.equal((await r.text()).length, 2000);
  });

  test('a different type for a known extension wins', async () => {
    const r = await get('/s/notes.txt');
    assert.equal(r.headers.get('content-type'), 'text/markdown; charset=utf-8');
    await r.arrayBuffer();
  });

  test('the same type as the built-in table keeps its charset', async () => {
    const r = await get('/s/style.css');
    assert.equal(r.headers.get('content-type'), 'text/css; charset=utf-8');
    await r.arrayBuffer();
  });

  test('an empty type (unknown to the build tool) falls back to the built-in table', async () => {
    const r = await get('/s/blob.bin');
    assert.equal(r.headers.get('content-type'), 'application/octet-stream');
    await r.arrayBuffer();
  });

  test('bad types are refused at setup with a clear error', async () => {
    await assert.rejects(createStatic(dir, { types: { '.x': 'not a type' } }), /types: invalid content type "not a type" for "\.x"/);
    await assert.rejects(createStatic(dir, { types: { 'a/b': 'text/plain' } }), /types: invalid extension "a\/b"/);
    await assert.rejects(createStatic(dir, { types: { '.x': 'text/plain\r\nX-Evil: 1' } }), /invalid content type/);
    await assert.rejects(createStatic(dir, { types: 'text/plain' as never }), /types must be an object/);
  });
});
