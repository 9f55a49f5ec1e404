// A real nginx in front of the server (installed from apt by scripts/ensure-system-deps.mjs):
// a location without the Upgrade headers makes the client fall back to SSE (nginx passes the
// stream at once thanks to X-Accel-Buffering: no), one with them keeps it on the WebSocket.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { connect } from '../../../../client/src/index.ts';
import { App, MemoryHistoryStore } from '../../../src/index.ts';
import { eventually, start, type Running } from '../../helpers.ts';

const NGINX = ['/usr/sbin/nginx', 'nginx'].find((bin) => spawnSync(bin, ['-v'], { stdio: 'ignore' }).status === 0);

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function config(dir: string, port: number, upstream: number): string {
  const temp = (name: string) => `${name} ${join(dir, name)};`;
  return `daemon off;
master_process off;
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log stderr error;
events { worker_connections 256; }
http {
  access_log off;
  ${temp('client_body_temp_path')} ${temp('proxy_temp_path')} ${temp('fastcgi_temp_path')} ${temp('uwsgi_temp_path')} ${temp('scgi_temp_path')}
  server {
    listen 127.0.0.1:${port};
    # No Upgrade headers (HTTP/1.1 upstream: uWS answers HTTP/1.0 with 505).
    location /plain/ {
      proxy_pass http://127.0.0.1:${upstream}/;
      proxy_http_version 1.1;
    }
    # A proxy that forwards only the headers it knows: the WebSocket handshake never arrives.
    location /stripping/ {
      proxy_pass http://127.0.0.1:${upstream}/;
      proxy_http_version 1.1;
      proxy_set_header Sec-WebSocket-Key "";
      proxy_set_header Sec-WebSocket-Version "";
    }
    # The documented WebSocket set-up.
    location /upgrading/ {
      proxy_pass http://127.0.0.1:${upstream}/;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection "upgrade";
    }
  }
}
`;
}

describe('behind a real nginx', {
  skip: NGINX === undefined ? 'nginx is not installed (scripts/ensure-system-deps.mjs installs it)' : false,
}, () => {
  let running: Running;
  let app: App;
  let nginx: ChildProcess;
  let port = 0;
  let dir = '';
  const opened: string[] = [];
  before(async () => {
    app = new App();
    app.topic('feed', { history: { size: 100, store: new MemoryHistoryStore() } });
    app.ws('/live', {
      fallback: true,
      upgrade: (req) => (req.header('sec-websocket-key') === undefined ? 'sse' : 'websocket'),
      open: (ws) => void opened.push(String(ws.data)),
      events: { echo: { handler: (_ws, d) => d } },
    });
    running = await start(app);
    port = await freePort();
    dir = mkdtempSync(join(tmpdir(), 'tachyon-nginx-'));
    writeFileSync(join(dir, 'nginx.conf'), config(dir, port, running.port));
    nginx = spawn(NGINX!, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'inherit'] });
    // nginx is up once it answers.
    for (let i = 0; ; i++) {
      const ok = await fetch(`http://127.0.0.1:${port}/plain/nothing`).then(
        (r) => r.status === 404,
        () => false,
      );
      if (ok) break;
      if (i > 100) throw new Error('nginx did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  after(async () => {
    const exited = new Promise((r) => nginx.once('exit', r));
    nginx.kill('SIGQUIT');
    await exited;
    await running.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('without the Upgrade headers: the connection gets through; which transport is recorded', async () => {
    opened.length = 0;
    const live = connect(`ws://127.0.0.1:${port}/plain/live`, { transports: ['websocket', 'sse'], fallbackTimeout: 2000 });
    await live.ready;
    console.log(`# nginx without the Upgrade headers: the client is on ${opened.join(', ')}`);
    assert.deepEqual(await live.request('echo', 'x'), 'x');
    live.close();
  });

  test('a proxy that strips the WebSocket handshake: the client falls back to SSE and everything works through nginx', async () => {
    opened.length = 0;
    const live = connect(`ws://127.0.0.1:${port}/stripping/live`, { transports: ['websocket', 'sse'], fallbackTimeout: 2000 });
    const got: unknown[] = [];
    live.on('feed', 'n', (d) => got.push(d));
    await live.ready;
    assert.deepEqual(opened, ['sse'], 'the session that opened is an SSE one');
    assert.deepEqual(await live.request('echo', { a: 1 }), { a: 1 });
    app.publish('feed', 'n', 1);
    await eventually(() => got.length === 1, 3000);
    // Each event reaches the client at once (no proxy buffering): a round trip stays fast.
    const t = Date.now();
    await live.ping();
    assert.ok(Date.now() - t < 1000);
    live.close();
  });

  test('with the Upgrade headers: the client stays on the WebSocket', async () => {
    opened.length = 0;
    const live = connect(`ws://127.0.0.1:${port}/upgrading/live`, { transports: ['websocket', 'sse'] });
    await live.ready;
    assert.deepEqual(opened, ['websocket']);
    assert.deepEqual(await live.request('echo', 'x'), 'x');
    live.close();
  });
});
