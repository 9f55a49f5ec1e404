// TLS in a cluster: the acceptor and the workers are all SSL apps (uWS needs them to agree),
// or, with reusePort, each worker listens with TLS itself.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import https from 'node:https';
import { test } from 'node:test';
import { startCluster } from './harness.ts';
import { selfSignedCert } from '../helpers.ts';

const { key, cert, keyFile, certFile } = selfSignedCert();

function getTls(port: number, path: string): Promise<any> {
  return new Promise((resolve, reject) => {
    https
      .get({ host: '127.0.0.1', port, path, rejectUnauthorized: false, agent: false }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d)).on('end', () => resolve(JSON.parse(body)));
      })
      .on('error', reject);
  });
}

test('uWS 20.57: an SSL acceptor hands HTTPS connections to SSL apps in worker threads (upstream #1119)', () => {
  const probe = new URL('./tls-acceptor-probe.ts', import.meta.url).pathname;
  const r = spawnSync(process.execPath, [probe, keyFile, certFile], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, `the probe died (${r.signal ?? r.status}): ${r.stdout}${r.stderr}`);
  const { served, errors } = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
  assert.equal(errors, 0);
  assert.equal(Object.keys(served).length, 2, 'both workers served');
  assert.equal(
    Object.values(served as Record<string, number>).reduce((a, b) => a + b),
    200,
  );
});

for (const reusePort of [false, true]) {
  test(`a TLS cluster${reusePort ? ' with reusePort' : ''}: every worker serves HTTPS on the one port`, {
    skip: reusePort && process.platform !== 'linux' && 'Linux only',
  }, async () => {
    const cluster = await startCluster({
      WORKERS: '2',
      TLS_KEY: key,
      TLS_CERT: cert,
      REUSE_PORT: reusePort ? '1' : '',
    });
    try {
      assert.equal(cluster.mode, reusePort ? 'reuseport' : 'acceptor');
      const workers = new Set<number>();
      // reusePort: the kernel picks a listener per connection by a hash; 40 connections all
      // landing on one of two workers would be a 2^-39 chance.
      for (let i = 0; i < 40 && workers.size < 2; i++) workers.add((await getTls(cluster.port, '/who')).worker);
      assert.deepEqual([...workers].sort(), [1, 2]);
    } finally {
      assert.deepEqual(await cluster.stop(), { code: null, signal: 'SIGTERM' });
    }
  });
}

test('TLS must agree: an App without tls in a TLS cluster fails startup', async () => {
  // The server's App takes tls from the same variables; give cluster() tls but break the App's.
  await assert.rejects(
    startCluster({ WORKERS: '2', TLS_KEY: key, TLS_CERT: cert, APP_NO_TLS: '1' }),
    /cluster\(\) and the App|cluster\(\{ tls \}\) is set but the App has no tls/,
  );
});
