#!/usr/bin/env node
// Memory per idle WebSocket connection, after a full GC: raw uWS (no JS upgrade handler) vs
// Tachyon (a route without an upgrade hook, and one with a synchronous hook). The suite's
// ws-connections-10k measures RSS without forcing a GC; this isolates what stays live.
//
//   node bench/ws-memory.mjs [connections=3000]
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);

if (process.argv[2] === '--serve') await serve(process.argv[3]);
else await main(Number(process.argv[2] ?? 3000));

async function serve(kind) {
  const snapshot = () => {
    globalThis.gc();
    const u = process.memoryUsage();
    return { rss: u.rss, heap: u.heapUsed };
  };
  let port;
  if (kind === 'uws') {
    const { default: uWS } = await import('uWebSockets.js');
    const app = uWS.App();
    app.ws('/echo', { idleTimeout: 0, message: (ws, data, isBinary) => ws.send(data, isBinary) });
    await new Promise((resolve) => app.listen('127.0.0.1', 0, (token) => resolve((port = uWS.us_socket_local_port(token)))));
  } else {
    const { App } = await import('@tachyon/server');
    const app = new App();
    const behavior = { message: (ws, data, isBinary) => ws.sendRaw(data, isBinary), idleTimeout: 0 };
    app.ws('/echo', kind === 'tachyon-hook' ? { ...behavior, upgrade: () => ({}) } : behavior);
    port = (await app.listen({ port: 0, host: '127.0.0.1' })).port;
  }
  const base = snapshot();
  process.stdout.write(`PORT ${port}\n`);
  process.stdin.once('data', (d) => {
    const n = Number(String(d));
    const now = snapshot();
    process.stdout.write(`${JSON.stringify({ rss: (now.rss - base.rss) / n, heap: (now.heap - base.heap) / n })}\n`);
    process.exit(0);
  });
}

async function ensureInstalled() {
  const { pkgJson } = await import('./lib/peers.mjs');
  const { ensureBenchInstall } = await import('./lib/install.mjs');
  ensureBenchInstall(
    ['uWebSockets.js', '@tachyon/server'].filter((p) => !pkgJson(p)),
    console.log,
  );
}

async function main(n) {
  await ensureInstalled();
  console.log(`${n} idle connections per server, memory per connection after gc():`);
  for (const kind of ['uws', 'tachyon', 'tachyon-hook']) {
    const server = spawn(process.execPath, ['--expose-gc', SELF, '--serve', kind], { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = (async function* () {
      let buf = '';
      for await (const chunk of server.stdout) {
        buf += chunk;
        for (let i = buf.indexOf('\n'); i !== -1; i = buf.indexOf('\n')) {
          yield buf.slice(0, i);
          buf = buf.slice(i + 1);
        }
      }
    })();
    const port = /PORT (\d+)/.exec((await lines.next()).value)[1];
    const sockets = [];
    for (let i = 0; i < n; i += 200) {
      const batch = [];
      for (let j = i; j < Math.min(n, i + 200); j++) {
        const ws = new WebSocket(`ws://127.0.0.1:${port}/echo`);
        sockets.push(ws);
        batch.push(new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = () => reject(new Error('connection failed'))))));
      }
      await Promise.all(batch);
    }
    await new Promise((r) => setTimeout(r, 500));
    server.stdin.write(`${n}\n`);
    const r = JSON.parse((await lines.next()).value);
    console.log(`  ${kind.padEnd(13)} RSS ${(r.rss / 1024).toFixed(2)} KiB   JS heap ${Math.round(r.heap)} B`);
    for (const ws of sockets) ws.close();
    await new Promise((r) => server.on('exit', r));
  }
}
