// Static refusals (400, 403, 405, and 404 without a notFound option) are HttpErrors: the
// route's error handlers see them like any other route's errors.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { App, HttpError } from '../../src/index.ts';
import { createStatic, type StaticFiles } from '../../src/serving/static/index.ts';
import { rawRequest, start, type Running } from '../helpers.ts';

function parse(raw: string): { status: number; head: string; body: string } {
  const split = raw.indexOf('\r\n\r\n');
  return { status: Number(raw.slice(9, 12)), head: raw.slice(0, split), body: raw.slice(split + 4) };
}

const send = async (port: number, method: string, path: string) =>
  parse(await rawRequest(port, `${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`));

describe('static refusals go through the error handlers', () => {
  let tmp: string;
  let srv: Running;
  let plain: Running;
  let files: StaticFiles;
  const seen: { status: number; path: string }[] = [];

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'tachyon-static-errors-'));
    await writeFile(join(tmp, 'a.txt'), 'a');
    await writeFile(join(tmp, '.env'), 'SECRET=1');
    files = await createStatic(tmp, { dotfiles: 'deny' }); // no notFound: misses throw 404
    const app = new App();
    app.static('/d', tmp, { dotfiles: 'deny' });
    app.any('/any/*', files.handler);
    app.error((err, req, res) => {
      assert.ok(err instanceof HttpError);
      seen.push({ status: err.status, path: req.path });
      res.status(err.status).json({ handled: err.status, allow: err.headers?.allow ?? null });
    });
    srv = await start(app);
    // Without an error handler: the default one answers with the standard error JSON.
    const bare = new App();
    bare.any('/any/*', files.handler);
    plain = await start(bare);
  });

  after(async () => {
    files.close();
    await srv.close();
    await plain.close();
    await rm(tmp, { recursive: true, force: true });
  });

  test('403 for a denied dotfile reaches app.error', async () => {
    const r = await send(srv.port, 'GET', '/d/.env');
    assert.equal(r.status, 403);
    assert.deepEqual(JSON.parse(r.body), { handled: 403, allow: null });
    assert.ok(seen.some((s) => s.status === 403 && s.path === '/d/.env'));
  });

  test('400 for a NUL byte reaches app.error', async () => {
    const r = await send(srv.port, 'GET', '/d/a%00.txt');
    assert.equal(r.status, 400);
    assert.deepEqual(JSON.parse(r.body), { handled: 400, allow: null });
  });

  test('405 for another method on a file reaches app.error, with Allow', async () => {
    const r = await send(srv.port, 'POST', '/any/a.txt');
    assert.equal(r.status, 405);
    assert.deepEqual(JSON.parse(r.body), { handled: 405, allow: 'GET, HEAD' });
  });

  test('404 from a handler without notFound reaches app.error', async () => {
    const r = await send(srv.port, 'GET', '/any/missing.txt');
    assert.equal(r.status, 404);
    assert.deepEqual(JSON.parse(r.body), { handled: 404, allow: null });
  });

  test('the default error handler keeps the bodies and the Allow header', async () => {
    const denied = await send(plain.port, 'GET', '/any/.env');
    assert.equal(denied.status, 403);
    assert.deepEqual(JSON.parse(denied.body), { error: 'Forbidden' });
    const bad = await send(plain.port, 'GET', '/any/a%00.txt');
    assert.equal(bad.status, 400);
    assert.deepEqual(JSON.parse(bad.body), { error: 'Bad Request' });
    const post = await send(plain.port, 'POST', '/any/a.txt');
    assert.equal(post.status, 405);
    assert.match(post.head, /\r\nallow: GET, HEAD\r\n/i);
    assert.deepEqual(JSON.parse(post.body), { error: 'Method Not Allowed' });
    const missing = await send(plain.port, 'GET', '/any/missing.txt');
    assert.equal(missing.status, 404);
    assert.deepEqual(JSON.parse(missing.body), { error: 'Not Found' });
  });

  test('a notFound option that is not a function is refused', async () => {
    await assert.rejects(createStatic(tmp, { notFound: 'x' as never }), /notFound must be a function/);
  });
});
