#!/usr/bin/env node
// Cross-server fan-out (issue "Many machines"): one app on two server processes joined by a
// broker; the senders connect to server A, every subscriber to server B, so each delivery
// crossed the broker. Tachyon with @tachyon/redis (and @tachyon/nats) vs Socket.IO with
// @socket.io/redis-adapter, same loadgen (bench/loadgen fanout --extra-senders --sender-url).
// Servers and broker share CPU 0, the load generator has CPU 1; fresh processes per run,
// warm-up, median of the runs.
//   node bench/cross-server.mjs [--runs 3] [--duration 5] [--peers tachyon-redis,tachyon-nats,socketio-redis]
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { installSignalHandlers, killGroup, runLoad, startServer, stopServer, track } from './lib/procs.mjs';
import { BENCH_DIR, RESULTS_DIR } from './lib/util.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const runs = Number(opt('runs', 3));
const duration = Number(opt('duration', 5));
const peers = opt('peers', 'tachyon-redis,tachyon-nats,socketio-redis').split(',');
const LOAD = { subscribers: 100, senders: 4, burst: 10, size: 64 };
const env = { pin: true, serverCpu: 0, loadCpu: 1 };
const LOADGEN = path.join(BENCH_DIR, 'loadgen/target/release/loadgen');
if (!existsSync(LOADGEN)) throw new Error('build bench/loadgen first (cargo build --release)');
installSignalHandlers?.();

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

async function startBroker(kind) {
  const port = await freePort();
  const argv = kind === 'redis' ? ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'] : ['nats-server', '-a', '127.0.0.1', '-p', String(port)];
  const child = track(spawn('taskset', ['-c', String(env.serverCpu), ...argv], { stdio: 'ignore', detached: true }));
  await new Promise((r) => setTimeout(r, 300));
  return { child, url: `${kind}://127.0.0.1:${port}` };
}

const SERVERS = {
  'tachyon-redis': { broker: 'redis', script: 'servers/tachyon-bus.mjs', env: (url) => ({ BUS: 'redis', BUS_URL: url }), protocol: 'tachyon', path: '/fanout' },
  'tachyon-nats': { broker: 'nats', script: 'servers/tachyon-bus.mjs', env: (url) => ({ BUS: 'nats', BUS_URL: url }), protocol: 'tachyon', path: '/fanout' },
  'socketio-redis': { broker: 'redis', script: 'servers/socketio-redis.mjs', env: (url) => ({ REDIS_URL: url }), protocol: 'socketio', path: '/' },
};

async function once(peer) {
  const spec = SERVERS[peer];
  const broker = await startBroker(spec.broker);
  const saved = { ...process.env };
  Object.assign(process.env, spec.env(broker.url));
  const node = process.execPath;
  const [a, b] = [await startServer(peer, [node, spec.script], env), await startServer(peer, [node, spec.script], env)];
  Object.assign(process.env, saved);
  try {
    const argv = [LOADGEN, 'fanout', '--protocol', spec.protocol, '--url', `ws://127.0.0.1:${b.port}${spec.path}`, '--sender-url', `ws://127.0.0.1:${a.port}${spec.path}`, '--extra-senders', '--subscribers', String(LOAD.subscribers), '--senders', String(LOAD.senders), '--burst', String(LOAD.burst), '--interval-ms', '0', '--size', String(LOAD.size), '--duration', String(duration), '--warmup', '1', '--drain', '3', '--quiet'];
    const { text } = await runLoad(argv, env, { allowFail: true });
    return JSON.parse(text);
  } finally {
    await Promise.all([stopServer(a), stopServer(b)]);
    killGroup(broker.child, 'SIGKILL');
  }
}

const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const results = {};
for (let r = 0; r < runs; r++) {
  for (const peer of peers) {
    const rep = await once(peer);
    (results[peer] ??= []).push(rep);
    console.error(`${peer} run ${r + 1}: ${Math.round(rep.rate ?? rep.delivered_per_s ?? 0)} deliveries/s ok=${rep.ok} ${rep.error ?? ''}`);
  }
}
const summary = {};
for (const [peer, reps] of Object.entries(results)) {
  const rate = (x) => x.rate ?? x.delivered_per_s;
  summary[peer] = { deliveries_per_s: Math.round(median(reps.map(rate))), p50_ms: median(reps.map((x) => x.latency_ms?.p50 ?? x.p50_ms)), p99_ms: median(reps.map((x) => x.latency_ms?.p99 ?? x.p99_ms)), ok: reps.every((x) => x.ok), runs: reps.length };
}
if (summary['tachyon-redis'] && summary['socketio-redis']) summary.ratio_tachyon_redis_vs_socketio_redis = +(summary['tachyon-redis'].deliveries_per_s / summary['socketio-redis'].deliveries_per_s).toFixed(2);
mkdirSync(RESULTS_DIR, { recursive: true });
writeFileSync(path.join(RESULTS_DIR, 'cross-server.json'), JSON.stringify({ load: LOAD, duration, runs, summary, raw: results }, null, 2) + '\n');
console.log(JSON.stringify({ load: LOAD, summary }, null, 2));
process.exit(0);
