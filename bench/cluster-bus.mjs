#!/usr/bin/env node
// cluster() with a broker (docs/cluster.md, "With a broker"): the two designs side by side in
// the same run, each run a fresh set of processes.
//
//   per-worker  each worker connects to the broker (its bus composed with the in-process mesh)
//   primary     cluster({ bus }): one connection per process, the primary relays
//   none        (in-machine only) no broker: the mesh alone, the reference
//
// cross: two cluster processes of 2 workers + the broker on CPU 0, the load generator on
//   CPU 1: 4 senders on process A, 100 subscribers on process B (spread over its workers by
//   the acceptor), so every delivery crossed the broker. A ladder of rates up to the first
//   one not delivered completely, then the highest sustained rate `--runs` times (median),
//   and 100 msg/s (10 000 deliveries/s) `--runs` times for latency at equal load.
// in-machine: one cluster process of 2 workers (+ the broker), senders and subscribers on
//   it: half the subscribers sit on the other worker, so half the deliveries go worker to
//   worker; 1000 msg/s (100 000 deliveries/s), `--runs` times.
// CPU per delivery: the server processes' (every thread) and the broker's CPU time from /proc
// over the whole load, divided by the deliveries. Broker connections: asked of the broker
// (Redis INFO clients; NATS /varz) while the load runs.
//
//   benchlock node bench/cluster-bus.mjs --runs 3 --duration 3 [--brokers redis,nats] [--only cross,in-machine]
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { cpuTicks, installSignalHandlers, killGroup, runLoad, startServer, stopServer, track } from './lib/procs.mjs';
import { BENCH_DIR, RESULTS_DIR } from './lib/util.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const runs = Number(opt('runs', 3));
const duration = Number(opt('duration', 3));
const brokers = opt('brokers', 'redis,nats').split(',');
const only = opt('only', 'cross,in-machine').split(',');
const RATES = [2000, 8000, 16000, 32000];
const loadFor = (rate) => {
  const intervalMs = rate <= 400 ? 4000 / rate : 4;
  return { rate, subscribers: 100, senders: 4, burst: Math.max(1, Math.round((rate * intervalMs) / 4000)), intervalMs, size: 64 };
};
const env = { pin: true, serverCpu: 0, loadCpu: 1 };
const LOADGEN = path.join(BENCH_DIR, 'loadgen/target/release/loadgen');
if (!existsSync(LOADGEN)) throw new Error('build bench/loadgen first (cargo build --release)');
const TICK = 100; // USER_HZ on Linux: /proc CPU times are in 1/100 s
installSignalHandlers();

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

async function startBroker(kind) {
  const port = await freePort();
  const mon = await freePort();
  const argv =
    kind === 'redis'
      ? ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
      : ['nats-server', '-a', '127.0.0.1', '-p', String(port), '-m', String(mon)];
  const child = track(spawn('taskset', ['-c', String(env.serverCpu), ...argv], { stdio: 'ignore', detached: true }));
  await new Promise((r) => setTimeout(r, 300));
  return { kind, child, port, mon, url: `${kind}://127.0.0.1:${port}` };
}

/** Client connections the broker holds right now (the servers' only: nothing else connects). */
async function brokerConnections(broker) {
  if (broker.kind === 'redis')
    return (
      Number(
        /connected_clients:(\d+)/.exec(execFileSync('redis-cli', ['-p', String(broker.port), 'info', 'clients'], { encoding: 'utf8' }))[1],
      ) - 1
    ); // minus redis-cli itself
  const varz = await (await fetch(`http://127.0.0.1:${broker.mon}/varz`)).json();
  return varz.connections;
}

async function once(kind, mode, topology, load) {
  const broker = mode === 'none' ? null : await startBroker(kind);
  const saved = { ...process.env };
  Object.assign(process.env, { BUS: kind, BUS_URL: broker?.url ?? '', BUS_MODE: mode, TACHYON_WORKERS: '2' });
  const script = ['servers/tachyon-cluster-bus.mjs'];
  const servers = [];
  try {
    servers.push(await startServer('tachyon', [process.execPath, ...script], env));
    if (topology === 'cross') servers.push(await startServer('tachyon', [process.execPath, ...script], env));
    Object.assign(process.env, saved);
    const [a, b] = [servers[0], servers.at(-1)];
    const argv = [
      LOADGEN,
      'fanout',
      '--protocol',
      'tachyon',
      '--url',
      `ws://127.0.0.1:${b.port}/fanout`,
      '--sender-url',
      `ws://127.0.0.1:${a.port}/fanout`,
      '--extra-senders',
      '--subscribers',
      String(load.subscribers),
      '--senders',
      String(load.senders),
      '--burst',
      String(load.burst),
      '--interval-ms',
      String(load.intervalMs),
      '--size',
      String(load.size),
      '--duration',
      String(duration),
      '--warmup',
      '1',
      '--drain',
      '2',
      '--quiet',
    ];
    const pids = [...servers.map((s) => s.pid), ...(broker ? [broker.child.pid] : [])];
    const before = pids.map(cpuTicks);
    let connections = null;
    const sample = setTimeout(
      () =>
        brokerConnections(broker).then(
          (n) => (connections = n),
          () => {},
        ),
      1500,
    );
    if (broker === null) clearTimeout(sample);
    const { text } = await runLoad(argv, env, { allowFail: true });
    const ticks = pids.map(cpuTicks).reduce((sum, t, i) => sum + (t - before[i]), 0);
    const rep = JSON.parse(text);
    delete rep.error_samples;
    // The whole load (warm-up, window, drain) delivered about rate x subscribers x (1 + duration + drain) messages.
    const deliveries = load.rate * load.subscribers * (1 + duration + 2);
    return { ...rep, cpu_us_per_delivery: +(((ticks / TICK) * 1e6) / deliveries).toFixed(3), broker_connections: connections };
  } finally {
    Object.assign(process.env, saved);
    await Promise.all(servers.map(stopServer));
    if (broker) killGroup(broker.child, 'SIGKILL');
  }
}

const median = (xs) => {
  const v = xs.filter((x) => typeof x === 'number').sort((x, y) => x - y);
  return v.length === 0 ? null : v[Math.floor(v.length / 2)];
};
const sustained = (rep, load) => rep.ok === true && rep.delivered_per_s >= 0.95 * load.rate * load.subscribers;
const line = (what, load, rep) =>
  `${what} ${load.rate} msg/s: ${Math.round(rep.delivered_per_s ?? 0)} deliveries/s, p50 ${rep.latency_us?.p50} us, p99 ${rep.latency_us?.p99} us, ${rep.cpu_us_per_delivery} us CPU/delivery, ${rep.broker_connections} broker connections, ok=${rep.ok} ${(rep.reasons ?? []).join('; ')}`;
const sum = (reps) => ({
  deliveries_per_s: Math.round(median(reps.map((x) => x.delivered_per_s)) ?? 0),
  all_ok: reps.every((x) => x.ok),
  p50_ms: median(reps.map((x) => x.latency_us?.p50)) / 1000,
  p99_ms: median(reps.map((x) => x.latency_us?.p99)) / 1000,
  cpu_us_per_delivery: median(reps.map((x) => x.cpu_us_per_delivery)),
  broker_connections: median(reps.map((x) => x.broker_connections)),
});

const raw = [];
const summary = {};
for (const kind of brokers) {
  if (only.includes('cross')) {
    // The ladder, both designs alternating rate by rate, until a design fails a rate.
    const best = { 'per-worker': null, primary: null };
    const failed = new Set();
    for (const rate of RATES) {
      const load = loadFor(rate);
      for (const mode of ['per-worker', 'primary']) {
        if (failed.has(mode)) continue;
        const rep = await once(kind, mode, 'cross', load);
        raw.push({ kind, mode, topology: 'cross', phase: 'ladder', load, rep });
        console.error(`ladder ${kind} ${line(mode, load, rep)}`);
        if (sustained(rep, load)) best[mode] = load;
        else failed.add(mode);
      }
      if (failed.size === 2) break;
    }
    // The highest rate both sustained, and 100 msg/s: same load for both, alternating runs.
    const common = Math.min(...Object.values(best).map((b) => b?.rate ?? 0));
    for (const [label, rate] of [
      ['sustained', common],
      ['10k', 100],
    ]) {
      if (rate === 0) continue;
      const load = loadFor(rate);
      const reps = { 'per-worker': [], primary: [] };
      for (let r = 0; r < runs; r++) {
        for (const mode of ['per-worker', 'primary']) {
          const rep = await once(kind, mode, 'cross', load);
          raw.push({ kind, mode, topology: 'cross', phase: label, load, rep });
          reps[mode].push(rep);
          console.error(`${label} ${kind} ${line(mode, load, rep)}`);
        }
      }
      for (const mode of ['per-worker', 'primary'])
        ((summary[kind] ??= {})[`cross ${label} (${rate} msg/s)`] ??= {})[mode] = {
          highest_sustained_msgs_per_s: best[mode]?.rate ?? 0,
          ...sum(reps[mode]),
        };
    }
  }
  if (only.includes('in-machine')) {
    const load = loadFor(1000);
    const modes = ['none', 'per-worker', 'primary'];
    const reps = Object.fromEntries(modes.map((m) => [m, []]));
    for (let r = 0; r < runs; r++) {
      for (const mode of modes) {
        const rep = await once(kind, mode, 'in-machine', load);
        raw.push({ kind, mode, topology: 'in-machine', load, rep });
        reps[mode].push(rep);
        console.error(`in-machine ${kind} ${line(mode, load, rep)}`);
      }
    }
    for (const mode of modes) ((summary[kind] ??= {})['in-machine (1000 msg/s)'] ??= {})[mode] = sum(reps[mode]);
  }
}
mkdirSync(RESULTS_DIR, { recursive: true });
const file = path.join(RESULTS_DIR, `cluster-bus-${new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19)}Z.json`);
writeFileSync(file, JSON.stringify({ rates: RATES, duration, runs, summary, raw }, null, 2) + '\n');
console.log(JSON.stringify(summary, null, 2));
console.log(`results: ${path.relative(process.cwd(), file)}`);
process.exit(0);
