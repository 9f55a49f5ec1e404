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
// Paced loads: 4 senders, 100 subscribers, 64-byte messages, a fixed rate of messages/s
// (x 100 deliveries). A peer *sustains* a rate when every message reaches every subscriber
// (the loadgen's ok) at that rate. The ladder goes up until a peer no longer sustains it;
// the highest sustained rate is then re-measured `runs` times (median). Senders as fast as
// their sockets take measure how fast a server reads, not the fan-out: not used.
const RATES = [100, 200, 400, 1000, 2000, 4000, 8000, 16000, 32000, 64000];
const loadFor = (rate) => {
  const intervalMs = rate <= 400 ? 4000 / rate : 4;
  return { rate, subscribers: 100, senders: 4, burst: Math.max(1, Math.round((rate * intervalMs) / 4000)), intervalMs, size: 64 };
};
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
  const argv =
    kind === 'redis'
      ? ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
      : ['nats-server', '-a', '127.0.0.1', '-p', String(port)];
  const child = track(spawn('taskset', ['-c', String(env.serverCpu), ...argv], { stdio: 'ignore', detached: true }));
  await new Promise((r) => setTimeout(r, 300));
  return { child, url: `${kind}://127.0.0.1:${port}` };
}

const SERVERS = {
  'tachyon-redis': {
    broker: 'redis',
    script: 'servers/tachyon-bus.mjs',
    env: (url) => ({ BUS: 'redis', BUS_URL: url }),
    protocol: 'tachyon',
    path: '/fanout',
  },
  'tachyon-nats': {
    broker: 'nats',
    script: 'servers/tachyon-bus.mjs',
    env: (url) => ({ BUS: 'nats', BUS_URL: url }),
    protocol: 'tachyon',
    path: '/fanout',
  },
  'socketio-redis': {
    broker: 'redis',
    script: 'servers/socketio-redis.mjs',
    env: (url) => ({ REDIS_URL: url }),
    protocol: 'socketio',
    path: '/',
  },
};

async function once(peer, LOAD) {
  const spec = SERVERS[peer];
  const broker = await startBroker(spec.broker);
  const saved = { ...process.env };
  Object.assign(process.env, spec.env(broker.url));
  const node = process.execPath;
  const [a, b] = [await startServer(peer, [node, spec.script], env), await startServer(peer, [node, spec.script], env)];
  Object.assign(process.env, saved);
  try {
    const argv = [
      LOADGEN,
      'fanout',
      '--protocol',
      spec.protocol,
      '--url',
      `ws://127.0.0.1:${b.port}${spec.path}`,
      '--sender-url',
      `ws://127.0.0.1:${a.port}${spec.path}`,
      '--extra-senders',
      '--subscribers',
      String(LOAD.subscribers),
      '--senders',
      String(LOAD.senders),
      '--burst',
      String(LOAD.burst),
      '--interval-ms',
      String(LOAD.intervalMs),
      '--size',
      String(LOAD.size),
      '--duration',
      String(duration),
      '--warmup',
      '1',
      '--drain',
      '3',
      '--quiet',
    ];
    const { text } = await runLoad(argv, env, { allowFail: true });
    return JSON.parse(text);
  } finally {
    await Promise.all([stopServer(a), stopServer(b)]);
    killGroup(broker.child, 'SIGKILL');
  }
}

const median = (xs) => {
  const v = xs.filter((x) => typeof x === 'number').sort((x, y) => x - y);
  return v.length === 0 ? null : v[Math.floor(v.length / 2)];
};
const sustained = (rep, load) => rep.ok === true && rep.delivered_per_s >= 0.95 * load.rate * load.subscribers;
const line = (peer, load, rep) =>
  `${peer} ${load.rate} msg/s: ${Math.round(rep.delivered_per_s ?? 0)} deliveries/s, p50 ${rep.latency_us?.p50} us, p99 ${rep.latency_us?.p99} us, ok=${rep.ok} ${(rep.reasons ?? []).join('; ')}`;
const ladder = {};
const summary = {};
for (const peer of peers) {
  ladder[peer] = [];
  let best = null;
  for (const rate of RATES) {
    const load = loadFor(rate);
    const rep = await once(peer, load);
    delete rep.error_samples;
    ladder[peer].push(rep);
    console.error(`ladder ${line(peer, load, rep)}`);
    if (!sustained(rep, load)) break;
    best = load;
  }
  const reps = [];
  if (best !== null) {
    for (let r = 0; r < runs; r++) {
      const rep = await once(peer, best);
      delete rep.error_samples;
      reps.push(rep);
      console.error(`final ${line(peer, best, rep)}`);
    }
  }
  // At 100 msg/s (10 000 deliveries/s), which every peer sustains: latency at equal load.
  const low = [];
  for (let r = 0; r < runs; r++) low.push(await once(peer, loadFor(100)));
  summary[peer] = {
    sustained_msgs_per_s: best?.rate ?? 0,
    sustained_deliveries_per_s: Math.round(median(reps.map((x) => x.delivered_per_s)) ?? 0),
    sustained_all_ok: reps.every((x) => x.ok),
    p50_ms_at_sustained: median(reps.map((x) => x.latency_us?.p50)) / 1000,
    p99_ms_at_sustained: median(reps.map((x) => x.latency_us?.p99)) / 1000,
    p50_ms_at_10k: median(low.map((x) => x.latency_us?.p50)) / 1000,
    p99_ms_at_10k: median(low.map((x) => x.latency_us?.p99)) / 1000,
  };
  ladder[peer].push(...reps, ...low);
}
for (const t of ['tachyon-redis', 'tachyon-nats']) {
  if (summary[t] && summary['socketio-redis']?.sustained_deliveries_per_s)
    summary[t].ratio_vs_socketio_redis = +(
      summary[t].sustained_deliveries_per_s / summary['socketio-redis'].sustained_deliveries_per_s
    ).toFixed(1);
}
const results = ladder;
const LOADS = { rates: RATES, example: loadFor(1000) };
mkdirSync(RESULTS_DIR, { recursive: true });
writeFileSync(
  path.join(RESULTS_DIR, 'cross-server.json'),
  JSON.stringify({ loads: LOADS, duration, runs, summary, raw: results }, null, 2) + '\n',
);
console.log(JSON.stringify({ loads: LOADS, summary }, null, 2));
process.exit(0);
