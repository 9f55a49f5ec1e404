import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { App, negotiateEncoding } from '../../src/index.ts';
import { start, type Running } from '../helpers.ts';

/** Raw GET with exact headers; node:http does not decompress, so we see the bytes as sent. */
function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('Accept-Encoding negotiation', () => {
  test('q-values, *, refusals, order of preference', () => {
    assert.equal(negotiateEncoding('gzip, deflate, br', ['br', 'gzip']), 'br');
    assert.equal(negotiateEncoding('gzip;q=1.0, br;q=0.5', ['br', 'gzip']), 'gzip');
    assert.equal(negotiateEncoding('br;q=0, gzip', ['br', 'gzip']), 'gzip');
    assert.equal(negotiateEncoding('*', ['br', 'gzip']), 'br');
    assert.equal(negotiateEncoding('*;q=0', ['br', 'gzip']), null);
    assert.equal(negotiateEncoding('identity', ['br', 'gzip']), null);
    assert.equal(negotiateEncoding('', ['br', 'gzip']), null);
    assert.equal(negotiateEncoding(undefined, ['br', 'gzip']), null);
    assert.equal(negotiateEncoding('GZIP', ['br', 'gzip']), 'gzip');
    assert.equal(negotiateEncoding('br;q=garbage, gzip;q=0.1', ['br', 'gzip']), 'gzip');
  });
});

describe('dynamic compression', () => {
  let srv: Running;
  const big = JSON.stringify({ items: Array.from({ length: 400 }, (_, i) => ({ i, name: `item ${i}` })) });
  const huge = 'x'.repeat(200 * 1024); // over the sync limit: compressed off-thread
  before(async () => {
    const app = new App({ compression: true });
    app.get('/json', () => JSON.parse(big));
    app.get('/small', () => ({ ok: true }));
    app.get('/huge', () => huge);
    app.get('/png', (req, res) => res.type('image/png').end(Buffer.alloc(5000, 1)));
    app.get('/off', { compress: false }, () => JSON.parse(big));
    app.get('/breach', { compress: { skipCredentialed: true } }, () => JSON.parse(big));
    app.get('/stream', (req, res) =>
      res.type('text/plain').stream(
        (async function* () {
          for (let i = 0; i < 50; i++) yield `line ${i} ${'y'.repeat(100)}\n`;
        })(),
      ),
    );
    app.get('/already', (req, res) => res.type('text/plain').header('content-encoding', 'identity').end('z'.repeat(5000)));
    srv = await start(app);
  });
  after(() => srv.close());

  test('brotli or gzip by Accept-Encoding, Vary set, bytes round-trip', async () => {
    const br = await get(srv.port, '/json', { 'accept-encoding': 'gzip, br' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(br.headers.vary, 'accept-encoding');
    assert.ok(br.body.length < big.length / 3);
    assert.equal(brotliDecompressSync(br.body).toString(), big);
    const gz = await get(srv.port, '/json', { 'accept-encoding': 'gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(gunzipSync(gz.body).toString(), big);
    const plain = await get(srv.port, '/json');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers.vary, 'accept-encoding', 'the identity answer still varies');
    assert.equal(plain.body.toString(), big);
  });

  test('large bodies are compressed off-thread and still arrive whole', async () => {
    const r = await get(srv.port, '/huge', { 'accept-encoding': 'br' });
    assert.equal(r.headers['content-encoding'], 'br');
    assert.equal(brotliDecompressSync(r.body).toString(), huge);
  });

  test('below the threshold, incompressible types, opted-out routes, already-encoded: untouched', async () => {
    for (const path of ['/small', '/png', '/off', '/already']) {
      const r = await get(srv.port, path, { 'accept-encoding': 'br, gzip' });
      assert.notEqual(r.headers['content-encoding'], 'br', path);
      assert.notEqual(r.headers['content-encoding'], 'gzip', path);
    }
  });

  test('skipCredentialed: no compression for requests with cookies (BREACH)', async () => {
    const anon = await get(srv.port, '/breach', { 'accept-encoding': 'br' });
    assert.equal(anon.headers['content-encoding'], 'br');
    const cred = await get(srv.port, '/breach', { 'accept-encoding': 'br', cookie: 'sid=1' });
    assert.equal(cred.headers['content-encoding'], undefined);
    assert.equal(cred.body.toString(), big);
  });

  test('streaming responses are compressed chunk by chunk', async () => {
    const r = await get(srv.port, '/stream', { 'accept-encoding': 'gzip' });
    assert.equal(r.headers['content-encoding'], 'gzip');
    const text = gunzipSync(r.body).toString();
    assert.equal(text.split('\n').length, 51);
    assert.ok(text.startsWith('line 0 '));
  });

  test('HEAD reports the compressed length without a body', async () => {
    const r = await new Promise<{ len?: string; enc?: string }>((resolve) => {
      request({ port: srv.port, host: '127.0.0.1', path: '/json', method: 'HEAD', headers: { 'accept-encoding': 'br' } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ len: res.headers['content-length'], enc: res.headers['content-encoding'] }));
      }).end();
    });
    const full = await get(srv.port, '/json', { 'accept-encoding': 'br' });
    assert.equal(r.enc, 'br');
    assert.equal(Number(r.len), full.body.length);
  });

  test('invalid compression options are refused', () => {
    assert.throws(() => new App({ compression: { brotliQuality: 12 } }), /brotliQuality/);
    assert.throws(() => new App({ compression: { encodings: ['zstd' as never] } }), /encodings/);
  });
});
