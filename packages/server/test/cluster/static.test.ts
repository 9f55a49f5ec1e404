// app.static() in a cluster: each file is read and compressed by one worker and held once,
// in shared memory, for all of them; every worker serves the same bytes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { brotliDecompressSync } from 'node:zlib';
import { clientOnEachWorker, startCluster } from './harness.ts';

const dir = mkdtempSync(join(tmpdir(), 'tachyon-cluster-static-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const big = Array.from({ length: 20_000 }, (_, i) => `line ${i} of a compressible text file\n`).join('');
writeFileSync(join(dir, 'big.txt'), big);
writeFileSync(join(dir, 'index.html'), '<h1>hi</h1>');
writeFileSync(join(dir, 'data.bin'), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)));

function fetchBytes(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Buffer; encoding: string | undefined }> {
  return new Promise((resolve, reject) => {
    http
      .get({ port, host: '127.0.0.1', path, headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res
          .on('data', (d) => chunks.push(d))
          .on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks), encoding: res.headers['content-encoding'] }));
      })
      .on('error', reject);
  });
}

test('static files are loaded by one worker and shared by the others; all serve the same bytes', async () => {
  const cluster = await startCluster({ WORKERS: '3', STATIC_DIR: dir });
  const { byWorker, spare } = await clientOnEachWorker(cluster.port, 3);
  try {
    const stats = await Promise.all([...byWorker.values()].map((c) => c.request('stats') as Promise<any>));
    assert.equal(
      stats.reduce((n, s) => n + s.staticMade, 0),
      3,
      'each of the 3 files made once in the cluster',
    );
    assert.equal(
      stats.reduce((n, s) => n + s.staticShared, 0),
      6,
      'and taken as is by the 2 other workers',
    );
    for (let i = 0; i < 6; i++) {
      const plain = await fetchBytes(cluster.port, '/static/big.txt');
      assert.equal(plain.status, 200);
      assert.equal(plain.body.toString(), big);
      const br = await fetchBytes(cluster.port, '/static/big.txt', { 'accept-encoding': 'br' });
      assert.equal(br.encoding, 'br');
      assert.equal(brotliDecompressSync(br.body).toString(), big);
      assert.equal((await fetchBytes(cluster.port, '/static/data.bin')).body.length, 4096);
    }
  } finally {
    for (const c of [...byWorker.values(), ...spare]) c.close();
    await cluster.stop();
  }
});
