// Static files over 1 MiB in a built SvelteKit app (Kit 3): streamed from disk, never held in
// memory, with ranges, ETag/304 and the build's .br/.gz variants, a slow reader served with
// backpressure, and clients leaving mid-file without a crash or a leaked file descriptor.
// The build is copied to build-large/ and two 5 MiB files are added to its client/, the way
// SvelteKit's builder would have written them (a JSON file with .br/.gz, a binary without).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { brotliCompressSync, constants as zc, gzipSync } from 'node:zlib';
import { buildFixture, startServer, type Running } from './helpers/fixture.ts';
import { raw } from './helpers/suite.ts';

const MiB = 1024 * 1024;

/** Polls `check` until true (or fails after `ms`). */
async function eventually(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('static files over 1 MiB in a built SvelteKit app', { timeout: 300_000 }, () => {
  let dir: string;
  let out: string;
  let server: Running;
  const bin = randomBytes(5 * MiB);
  const json = Buffer.from(JSON.stringify(Array.from({ length: 90_000 }, (_, i) => ({ id: i, name: `place number ${i}` }))));
  const br = brotliCompressSync(json, { params: { [zc.BROTLI_PARAM_QUALITY]: 5 } });
  const gz = gzipSync(json);
  const fds = () => readdirSync(`/proc/${server.child.pid}/fd`).length;

  before(async () => {
    dir = buildFixture('kit3');
    out = join(dir, 'build-large');
    rmSync(out, { recursive: true, force: true });
    cpSync(join(dir, 'build'), out, { recursive: true });
    writeFileSync(join(out, 'client', 'big.bin'), bin);
    writeFileSync(join(out, 'client', 'big.json'), json);
    writeFileSync(join(out, 'client', 'big.json.br'), br);
    writeFileSync(join(out, 'client', 'big.json.gz'), gz);
    // gc() on SIGUSR2: a FileHandle left to the garbage collector would only close there.
    writeFileSync(join(out, 'gc-entry.js'), "process.on('SIGUSR2', () => globalThis.gc());\nawait import('./index.js');\n");
    server = await startServer(dir, { NODE_OPTIONS: '--expose-gc' }, 'build-large/gc-entry.js');
  });
  after(async () => {
    await server?.stop();
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it('streams a 5 MiB file whole, with Content-Length, ETag/304 and ranges', async () => {
    assert.ok(json.length > MiB);
    const full = await raw(server.url, { path: '/big.bin', headers: { 'accept-encoding': 'br, gzip' } });
    assert.equal(full.status, 200);
    assert.equal(full.headers['content-length'], String(bin.length));
    assert.equal(full.headers['content-encoding'], undefined, 'no variant for an incompressible file');
    assert.equal(full.headers['accept-ranges'], 'bytes');
    assert.equal(full.headers['cache-control'], 'public, max-age=0');
    assert.ok(full.body.equals(bin));
    const etag = full.headers.etag as string;
    assert.match(etag, /^"[0-9a-f]+-[0-9a-f]+"$/);
    const revalidated = await raw(server.url, { path: '/big.bin', headers: { 'if-none-match': etag } });
    assert.equal(revalidated.status, 304);
    assert.equal(revalidated.body.length, 0);
    const part = await raw(server.url, { path: '/big.bin', headers: { range: 'bytes=4000000-4000999' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers['content-range'], `bytes 4000000-4000999/${bin.length}`);
    assert.ok(part.body.equals(bin.subarray(4_000_000, 4_001_000)));
    const tail = await raw(server.url, { path: '/big.bin', headers: { range: 'bytes=-10' } });
    assert.ok(tail.body.equals(bin.subarray(bin.length - 10)));
    assert.equal((await raw(server.url, { path: '/big.bin', headers: { range: `bytes=${bin.length}-` } })).status, 416);
    const head = await raw(server.url, { method: 'HEAD', path: '/big.bin' });
    assert.equal(head.headers['content-length'], String(bin.length));
  });

  it("sends the build's .br/.gz of a large file, streamed from disk; ranges stay identity", async () => {
    const b = await raw(server.url, { path: '/big.json', headers: { 'accept-encoding': 'gzip, br' } });
    assert.equal(b.status, 200);
    assert.equal(b.headers['content-encoding'], 'br');
    assert.equal(b.headers.vary, 'Accept-Encoding');
    assert.equal(b.headers['content-length'], String(br.length));
    assert.ok(b.body.equals(br));
    const g = await raw(server.url, { path: '/big.json', headers: { 'accept-encoding': 'gzip' } });
    assert.equal(g.headers['content-encoding'], 'gzip');
    assert.ok(g.body.equals(gz));
    assert.equal(
      (await raw(server.url, { path: '/big.json', headers: { 'accept-encoding': 'br', 'if-none-match': b.headers.etag as string } }))
        .status,
      304,
    );
    const id = await raw(server.url, { path: '/big.json' });
    assert.equal(id.headers['content-encoding'], undefined);
    assert.ok(id.body.equals(json));
    const part = await raw(server.url, { path: '/big.json', headers: { 'accept-encoding': 'br', range: 'bytes=0-99' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers['content-encoding'], undefined);
    assert.ok(part.body.equals(json.subarray(0, 100)));
    assert.equal((await raw(server.url, { path: '/big.json.br' })).status, 404, 'a variant is not a URL');
  });

  it('a slow reader gets every byte (backpressure) while other requests are answered', async () => {
    const socket = connect(server.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      socket.on('end', resolve);
      socket.on('error', reject);
    });
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.write('GET /big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    socket.pause(); // reads nothing for a while: the server must wait, not buffer 5 MiB or fail
    await new Promise((r) => setTimeout(r, 1000));
    const page = await raw(server.url, { path: '/' });
    assert.equal(page.status, 200, 'the server is not blocked by the paused reader');
    // Then read it slowly: a few KiB at a time.
    socket.removeAllListeners('data');
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      socket.pause();
      setTimeout(() => socket.resume(), 2);
    });
    socket.resume();
    await ended;
    const all = Buffer.concat(chunks);
    const split = all.indexOf('\r\n\r\n');
    assert.match(all.subarray(0, split).toString(), /^HTTP\/1\.1 200/);
    assert.ok(all.subarray(split + 4).equals(bin), 'every byte, in order');
  });

  it('clients leaving mid-file: no crash, file descriptors back after gc(), the next request works', async () => {
    if (!existsSync(`/proc/${server.child.pid}/fd`)) return;
    // Warm: whatever the first requests open for good (sockets, caches) is not a leak.
    await raw(server.url, { path: '/big.bin' });
    const before = fds();
    const leaveAfterFirstBytes = (path: string) =>
      new Promise<void>((resolve) => {
        const socket = connect(server.port, '127.0.0.1');
        socket.once('data', () => socket.destroy());
        socket.on('close', () => resolve());
        socket.on('error', () => resolve());
        socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n`);
      });
    for (let round = 0; round < 5; round++)
      await Promise.all(Array.from({ length: 10 }, (_, i) => leaveAfterFirstBytes(i % 2 === 0 ? '/big.bin' : '/big.json')));
    server.child.kill('SIGUSR2');
    await eventually(() => fds() <= before + 2, 10_000, `file descriptors back to ${before} (now ${fds()})`);
    assert.equal(server.child.exitCode, null, 'still running');
    const again = await raw(server.url, { path: '/big.bin' });
    assert.equal(again.status, 200);
    assert.ok(again.body.equals(bin));
    assert.doesNotMatch(server.output(), /Error|Unhandled/);
  });
});
