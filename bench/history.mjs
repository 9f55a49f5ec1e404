#!/usr/bin/env node
// History cost (docs/history.md): fan-out with history off, on (memory), on (Redis), in the
// same run, and the replay rate of a reconnecting client. The server runs in a fresh child
// process pinned to core 0 (taskset), the subscribers (Node WebSocket clients) on core 1.
// Run through benchlock: `benchlock node bench/history.mjs` (see bench/README.md).
//   --subscribers 200  --messages 20000  --runs 3  --replay 50000
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const { values: o } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '200' },
    messages: { type: 'string', default: '20000' },
    runs: { type: 'string', default: '3' },
    replay: { type: 'string', default: '50000' },
    child: { type: 'string' },
    port: { type: 'string' },
    redis: { type: 'string' },
  },
});

// ---- the server (child process) ----
if (o.child !== undefined) {
  const { App } = await import(join(here, '../packages/server/dist/index.js'));
  const app = new App();
  const mode = o.child;
  if (mode === 'memory') app.topic('room:*', { history: { size: 100_000 } });
  if (mode === 'redis') {
    const { redisHistory } = await import(join(here, '../packages/redis/dist/index.js'));
    app.topic('room:*', { history: { size: 100_000, store: redisHistory({ url: o.redis, prefix: `b${process.pid}:` }) } });
  }
  app.ws('/live', {});
  app.get('/cpu', () => {
    const u = process.cpuUsage();
    return { us: u.user + u.system };
  });
  app.get('/publish', (req, res) => {
    const n = Number(req.query.n);
    let i = 0;
    const step = () => {
      for (let k = 0; k < 200 && i < n; k++) app.publish('room:1', 'n', { i: i++, text: 'hello there' });
      if (i < n) setImmediate(step);
      else res.json({ ok: true });
    };
    step();
  });
  await app.listen(Number(o.port), '127.0.0.1');
  process.send('ready');
} else await main();

async function freePort() {
  const s = createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const p = s.address().port;
  s.close();
  return p;
}

async function startServer(mode, redisUrl) {
  const port = await freePort();
  const child = spawn(
    'taskset',
    [
      '-c',
      '0',
      process.execPath,
      fileURLToPath(import.meta.url),
      '--child',
      mode,
      '--port',
      String(port),
      ...(redisUrl ? ['--redis', redisUrl] : []),
    ],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  await once(child, 'message');
  return { port, stop: async () => (child.kill(), await once(child, 'exit')) };
}

function client(url, onFrame) {
  const ws = new WebSocket(url);
  ws.onmessage = (e) => onFrame(e.data);
  return new Promise((resolve, reject) => {
    ws.onopen = () => resolve(ws);
    ws.onerror = reject;
  });
}

async function fanout(mode, redisUrl, subs, messages) {
  const s = await startServer(mode, redisUrl);
  let got = 0;
  const clients = [];
  for (let i = 0; i < subs; i++) clients.push(await client(`ws://127.0.0.1:${s.port}/live`, () => got++));
  for (const c of clients) c.send('{"type":"subscribe","topic":"room:1","ref":1}');
  while (got < subs) await new Promise((r) => setTimeout(r, 5));
  // Warm-up, then the measured run.
  const cpu = async () => (await (await fetch(`http://127.0.0.1:${s.port}/cpu`)).json()).us;
  const run = async (n) => {
    got = 0;
    const c0 = await cpu();
    const t = performance.now();
    await fetch(`http://127.0.0.1:${s.port}/publish?n=${n}`);
    while (got < n * subs) await new Promise((r) => setTimeout(r, 1));
    const ms = performance.now() - t;
    return { ms, cpuUs: (await cpu()) - c0 };
  };
  await run(Math.ceil(messages / 10));
  const { ms, cpuUs } = await run(messages);
  for (const c of clients) c.close();
  await s.stop();
  // Deliveries per second, and the server's CPU per publish (µs; its process only, not redis-server's).
  return { rate: (messages * subs) / (ms / 1000), cpu: cpuUs / messages };
}

async function replay(mode, redisUrl, n) {
  const s = await startServer(mode, redisUrl);
  const url = `ws://127.0.0.1:${s.port}/live`;
  const frames = [];
  const c = await client(url, (d) => frames.push(d));
  c.send('{"type":"subscribe","topic":"room:1","ref":1}');
  while (frames.length === 0) await new Promise((r) => setTimeout(r, 5));
  const at = JSON.parse(frames[0]);
  c.close();
  await fetch(`http://127.0.0.1:${s.port}/publish?n=${n}`);
  await new Promise((r) => setTimeout(r, 200));
  let count = 0;
  let done;
  const finished = new Promise((r) => (done = r));
  const t0 = performance.now();
  const r = await client(url, (d) => {
    count++;
    if (d.startsWith('{"type":"subscribed"')) done(performance.now());
  });
  const t = performance.now();
  r.send(JSON.stringify({ type: 'subscribe', topic: 'room:1', since: { offset: at.offset, epoch: at.epoch }, ref: 2 }));
  const end = await finished;
  void t0;
  r.close();
  await s.stop();
  if (count - 1 !== n) throw new Error(`replayed ${count - 1} of ${n}`);
  return n / ((end - t) / 1000);
}

async function main() {
  if (spawnSync('taskset', ['-V']).status !== 0) throw new Error('needs taskset (util-linux) and Linux');
  spawnSync('taskset', ['-cp', '1', String(process.pid)]);
  const redisPort = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'bench-redis-'));
  const redis = spawn('taskset', ['-c', '1', 'redis-server', '--port', String(redisPort), '--save', '', '--appendonly', 'no'], {
    cwd: dir,
    stdio: 'ignore',
  });
  await new Promise((r) => setTimeout(r, 300));
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  const subs = Number(o.subscribers),
    messages = Number(o.messages),
    runs = Number(o.runs);
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const res = { off: [], memory: [], redis: [] };
  const cpuRes = { off: [], memory: [], redis: [] };
  try {
    for (let r = 0; r < runs; r++)
      for (const mode of ['off', 'memory', 'redis']) {
        const f = await fanout(mode, redisUrl, subs, messages);
        res[mode].push(f.rate);
        cpuRes[mode].push(f.cpu);
      }
    console.log(`fan-out: ${subs} subscribers, ${messages} publishes, median of ${runs}: deliveries/s, and server CPU per publish`);
    const off = median(res.off);
    const offCpu = median(cpuRes.off);
    for (const mode of ['off', 'memory', 'redis']) {
      console.log(
        `  history ${mode.padEnd(6)} ${Math.round(median(res[mode])).toLocaleString('en')}/s (${(median(res[mode]) / off).toFixed(2)} x off)   ${median(cpuRes[mode]).toFixed(1)} µs CPU/publish (${(median(cpuRes[mode]) / offCpu).toFixed(2)} x off)`,
      );
    }
    const n = Number(o.replay);
    for (const mode of ['memory', 'redis']) {
      const rates = [];
      for (let r = 0; r < runs; r++) rates.push(await replay(mode, redisUrl, n));
      console.log(
        `replay (${mode}): ${n} missed messages, ${Math.round(median(rates)).toLocaleString('en')} messages/s (median of ${runs})`,
      );
    }
  } finally {
    redis.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}
