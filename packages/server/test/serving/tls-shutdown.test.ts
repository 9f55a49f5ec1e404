import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { App } from '../../src/index.ts';
import { selfSignedCert, sleep } from '../helpers.ts';

const selfSigned = selfSignedCert;

function httpsGet(port: number, servername: string, ca: string): Promise<{ status: number; body: string; peer: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path: '/who', servername, ca, agent: false }, (res) => {
      let body = '';
      const peer = (res.socket as import('node:tls').TLSSocket).getPeerCertificate().subject.CN as string;
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body, peer }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('TLS', () => {
  test('HTTPS with PEM strings, SNI for a second hostname, protocol reported as https', async () => {
    const main = selfSigned('localhost');
    const other = selfSigned('other.test');
    const app = new App({ tls: { key: main.key, cert: main.cert, sni: { 'other.test': { key: other.keyFile, cert: other.certFile } } } });
    app.get('/who', (req) => `${req.protocol} ${req.header('host')}`);
    const server = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const a = await httpsGet(server.port, 'localhost', main.cert);
      assert.equal(a.status, 200);
      assert.equal(a.peer, 'localhost');
      assert.match(a.body, /^https /);
      const b = await httpsGet(server.port, 'other.test', other.cert);
      assert.equal(b.peer, 'other.test');
      await assert.rejects(httpsGet(server.port, 'localhost', other.cert), 'a client that trusts only the other cert refuses the main one');
    } finally {
      await server.close();
    }
  });

  test('a bad key or certificate is a clear startup error, not a crash', async () => {
    const app = new App({ tls: { key: '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n', cert: '/nonexistent.pem' } });
    app.get('/', () => 'x');
    await assert.rejects(app.listen(0), /construction failed/);
    assert.throws(() => new App({ tls: 'yes' as never }), /tls must be an object/);
  });
});

describe('graceful shutdown on signals', () => {
  test('SIGTERM under load: in-flight requests finish, no accepted request fails, hooks run, the process ends by the signal', async () => {
    const script = `
      import { App } from ${JSON.stringify(fileURLToPath(new URL('../../src/index.ts', import.meta.url)))};
      let started = 0, completed = 0;
      const app = new App();
      app.use(async (req, res, next) => { started++; await next(); if (!res.aborted) completed++; });
      app.get('/fast', () => 'ok');
      app.get('/slow', async () => { await new Promise((r) => setTimeout(r, 300)); return 'slow ok'; });
      app.onClose(() => console.log('CLOSED ' + started + ' ' + completed));
      const s = await app.listen({ port: 0, host: '127.0.0.1', signals: true, shutdownTimeout: 5000 });
      console.log('PORT ' + s.port);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    while (!/PORT (\d+)/.test(out)) await sleep(10);
    const port = Number(/PORT (\d+)/.exec(out)![1]);

    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const outcomes = { ok: 0, slowOk: 0, refused: 0, other: [] as string[] };
    let stop = false;
    const once = (path: string) =>
      new Promise<void>((resolve) => {
        const req = request({ port, host: '127.0.0.1', path, agent }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => {
            if (res.statusCode === 200 && body === 'ok') outcomes.ok++;
            else if (res.statusCode === 200 && body === 'slow ok') outcomes.slowOk++;
            else outcomes.other.push(`${res.statusCode} ${body}`);
            resolve();
          });
          res.on('error', (e) => (outcomes.other.push(`response error ${e.message}`), resolve()));
        });
        req.on('error', (e: NodeJS.ErrnoException) => {
          // Never accepted: the listener is gone, or a reused idle connection was closed
          // before the server read the request. Anything else is a failure.
          if (e.code === 'ECONNREFUSED' || ((e.code === 'ECONNRESET' || e.message === 'socket hang up') && req.reusedSocket))
            outcomes.refused++;
          else outcomes.other.push(`${e.code} ${e.message}`);
          resolve();
        });
        req.end();
      });
    const loops = Array.from({ length: 4 }, async () => {
      while (!stop) await once('/fast');
    });
    const slow = Array.from({ length: 3 }, () => once('/slow'));
    await sleep(100); // the slow requests are in flight now
    child.kill('SIGTERM');
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (code, signal) => resolve(signal)));
    await Promise.all(slow);
    await sleep(200);
    stop = true;
    await Promise.all(loops);
    agent.destroy();
    assert.equal(await exited, 'SIGTERM', 'the process ends by the re-raised signal');
    assert.equal(outcomes.slowOk, 3, 'requests in flight when the signal came finished');
    assert.ok(outcomes.ok > 10, `the load ran (${outcomes.ok} ok)`);
    assert.deepEqual(outcomes.other, []);
    const closed = /CLOSED (\d+) (\d+)/.exec(out);
    assert.ok(closed, 'onClose ran');
    assert.equal(closed![1], closed![2], 'every request the server started, it completed');
  });
});
