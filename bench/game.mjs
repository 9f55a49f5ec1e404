#!/usr/bin/env node
// `npm run bench:game`: the game-capacity benchmark of the seeds, on the typing race
// (examples/typing-race). Each peer runs the same rules module; bench/loadgen's `game` mode
// brings virtual players at a fixed rate until the latency or errors break the limit.
//
//   --peers tachyon,socketio-uws,socketio,bun,uws   --rate 100 (players/s)   --duration 180 (s, at most)
//   --runs 1 (fresh server each, in rounds over the peers; the median capacity counts)   --max-players 18000   --stop-after-bad 3 (bad seconds in a row)   --p95-limit-ms 50   --wait-seconds 2
//   --compact-tick 0 (ms: the tachyon-compact peer's publish tick; 0, the default: no tick, binary keystrokes only;
//                     with a tick, keystrokes are acknowledged in binary at once and the room sees them within the
//                     tick: a second is also bad when that "view" p95 reaches the tick + --p95-limit-ms)
//   --warmup 5 (s: bad seconds before this do not count)   --render FILE (only the charts and the
//   RESULTS.md section, from a saved run)   --write (results JSON and charts under bench/results/)
//
// Capacity = the most players connected during the last good second before the first bad
// one (a second is bad when ping or keystroke p95 >= the limit, or it had errors), server
// pinned to one core, load generator to the other.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ensureLoadgen, environment, nofileStatus } from './lib/env.mjs';
import { lineChart, PEER_COLORS } from './lib/game-charts.mjs';
import { gameGoals, gameMarkdown, withGameSection } from './lib/game-report.mjs';
import { ensureBenchInstall } from './lib/install.mjs';
import { pkgJson, probeRuntimes } from './lib/peers.mjs';
import { installSignalHandlers, runLoad, startServer, stopServer } from './lib/procs.mjs';
import { BENCH_DIR, RESULTS_DIR, fmtInt, fmtX, table } from './lib/util.mjs';

/** Not results/charts: `npm run bench` clears that folder when it regenerates its charts. */
const CHARTS_DIR = path.join(RESULTS_DIR, 'game-charts');

const GAME_PEERS = {
  tachyon: {
    label: 'Tachyon',
    runtime: 'node',
    protocol: 'tachyon',
    packages: ['@tachyon/server'],
    about: 'examples/typing-race itself (createGameApp)',
  },
  'tachyon-compact': {
    label: 'Tachyon, compact',
    runtime: 'node',
    protocol: 'tachyon',
    packages: ['@tachyon/server'],
    about:
      "the same server with the game's opt-in protocol: keystrokes as binary events (loadgen --compact); with --compact-tick N, room events held N ms (coalescePublishes: { tick }) and each keystroke acknowledged at once in binary",
    script: 'tachyon',
    // GAME_TICK_MS comes from --compact-tick (0: binary keystrokes only, every publish at once).
    tickFromOption: true,
    loadgenArgs: ['--compact'],
  },
  'socketio-uws': {
    label: 'Socket.IO/uWS',
    runtime: 'node',
    protocol: 'socketio',
    packages: ['socket.io', 'uWebSockets.js'],
    about: "Socket.IO 4.8 on uWebSockets.js (io.attachApp), the seed's winner",
  },
  socketio: {
    label: 'Socket.IO/ws',
    runtime: 'node',
    protocol: 'socketio',
    packages: ['socket.io'],
    about: 'Socket.IO 4.8 on its default ws engine',
  },
  bun: {
    label: 'Bun native',
    runtime: 'bun',
    protocol: 'tachyon',
    packages: ['bun'],
    about: "Bun.serve's native WebSocket pub/sub, Tachyon's wire format by hand",
  },
  uws: {
    label: 'raw uWS',
    runtime: 'node',
    protocol: 'tachyon',
    packages: ['uWebSockets.js'],
    about: "raw uWebSockets.js, Tachyon's wire format by hand (the ceiling)",
  },
};

const { values: o } = parseArgs({
  options: {
    peers: { type: 'string', default: Object.keys(GAME_PEERS).join(',') },
    rate: { type: 'string', default: '100' },
    duration: { type: 'string', default: '180' },
    'max-players': { type: 'string', default: '18000' },
    'stop-after-bad': { type: 'string', default: '3' },
    'p95-limit-ms': { type: 'string', default: '50' },
    'wait-seconds': { type: 'string', default: '2' },
    runs: { type: 'string', default: '1' },
    warmup: { type: 'string', default: '5' },
    write: { type: 'boolean', default: false },
    render: { type: 'string' },
    'compact-tick': { type: 'string', default: '0' },
  },
});
const log = (m) => console.error(m);
installSignalHandlers();
if (o.render) {
  // Only the charts and the RESULTS.md section, from a saved run.
  writeOutputs(JSON.parse(readFileSync(o.render, 'utf8')), path.resolve(o.render));
  process.exit(0);
}

const peers = o.peers
  .split(',')
  .map((p) => p.trim())
  .filter(Boolean);
for (const p of peers) if (!GAME_PEERS[p]) throw new Error(`unknown game peer ${p} (${Object.keys(GAME_PEERS).join(', ')})`);
ensureBenchInstall(
  peers.flatMap((p) => GAME_PEERS[p].packages).filter((name) => !pkgJson(name)),
  log,
);
const loadgen = ensureLoadgen(log);
if (loadgen.error) throw new Error(loadgen.error);
const runtimes = probeRuntimes();
const env = environment(runtimes);
const maxPlayers = Number(o['max-players']);
const nofile = maxPlayers + 1000;
const nf = nofileStatus(nofile);
if (!nf.ok) log(`bench:game: WARNING ${nf.reason ?? 'cannot raise the open-file limit'}: servers keep the current limit`);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'tachyon-bench-game-'));

/** The first seconds (a cold server: JIT, first allocations) do not count as bad. */
const warmup = Number(o.warmup);
function capacityOf(timeline) {
  let best = 0;
  for (const row of timeline) {
    if (!row.ok && row.t > warmup)
      return {
        players: best,
        limited: true,
        at: row.t,
        why:
          row.errors > 0
            ? `${row.errors} errors`
            : `p95 ping ${row.ping?.p95 ?? '—'} ms, keystroke ${row.key?.p95 ?? '—'} ms, view ${row.view?.p95 ?? '—'} ms`,
      };
    best = Math.max(best, row.players);
  }
  return { players: best, limited: false };
}

/** One measured run of `peer` on a fresh server. */
async function runOnce(peer, def, argv, runNo) {
  const metricsFile = path.join(tmp, `${peer}-${runNo}.jsonl`);
  process.env.GAME_METRICS_FILE = metricsFile;
  process.env.GAME_WAIT_SECONDS = o['wait-seconds'];
  // A peer's own settings (the compact one's tick), and none left over from the peer before.
  const tick = def.tickFromOption ? Number(o['compact-tick']) : 0;
  delete process.env.GAME_TICK_MS;
  if (tick > 0) process.env.GAME_TICK_MS = String(tick);
  const server = await startServer(peer, argv, env, nf.ok ? { nofile } : {});
  const url = def.protocol === 'socketio' ? `ws://127.0.0.1:${server.port}/` : `ws://127.0.0.1:${server.port}/ws`;
  const t0 = Date.now();
  const load = await runLoad(
    [
      loadgen.bin,
      'game',
      '--url',
      url,
      '--protocol',
      def.protocol,
      '--rate',
      o.rate,
      '--duration',
      o.duration,
      '--max-players',
      String(maxPlayers),
      '--stop-after-bad',
      o['stop-after-bad'],
      '--warmup',
      o.warmup,
      '--p95-limit-ms',
      o['p95-limit-ms'],
      '--server-pid',
      String(server.pid),
      ...(def.loadgenArgs ?? []),
      // What the other players see waits for the tick: bounded by the tick plus the same limit.
      '--view-p95-limit-ms',
      String(tick + Number(o['p95-limit-ms'])),
    ],
    env,
    { allowFail: true },
  );
  const died = server.died;
  await stopServer(server);
  const report = JSON.parse(load.text.trim().split('\n').at(-1));
  const metrics = readFileSync(metricsFile, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  // Each loadgen second ends at t0 + t s: the server line closest to it.
  for (const row of report.timeline) {
    const at = t0 + row.t * 1000;
    row.server = metrics.reduce((best, m) => (!best || Math.abs(m.t - at) < Math.abs(best.t - at) ? m : best), undefined) ?? null;
  }
  const capacity = capacityOf(report.timeline);
  const good = report.timeline.filter((r) => !capacity.limited || r.t < capacity.at);
  const maxGenCpu = Math.max(0, ...good.map((r) => r.loadgen_cpu));
  log(
    `bench:game: ${def.label} run ${runNo}: capacity ${capacity.limited ? '' : '≥ '}${fmtInt(capacity.players)} players${capacity.limited ? ` (first bad second t=${capacity.at}s: ${capacity.why})` : ' (never limited)'}; loadgen CPU ≤ ${maxGenCpu}%${died ? `; server died: ${died}` : ''}`,
  );
  return {
    capacity,
    atCapacity: good.at(-1) ?? null,
    maxLoadgenCpuOk: maxGenCpu,
    died: died ?? null,
    errorSamples: report.error_samples,
    timeline: report.timeline,
  };
}

const runs = Math.max(1, Number(o.runs));
const plan = peers.map((peer) => {
  const def = GAME_PEERS[peer];
  const script = path.join('servers', `game-${def.script ?? peer}.mjs`);
  const argv = def.runtime === 'bun' ? [runtimes.bun.bin, script] : [process.execPath, script];
  log(`bench:game: ${def.label} (${def.about}) at ${o.rate} players/s, ${runs} run(s)`);
  return { peer, def, argv, all: [] };
});
// In rounds (run 1 of every peer, then run 2, …), not one peer after another: the host's
// drift over a long invocation (steal, a neighbour's load) then falls on every peer alike,
// and the ratios compare runs minutes apart rather than a quarter of an hour.
for (let i = 1; i <= runs; i++) {
  if (runs > 1) log(`\nbench:game: round ${i} of ${runs}`);
  for (const p of plan) p.all.push(await runOnce(p.peer, p.def, p.argv, i));
}
const results = plan.map(({ peer, def, all }) => {
  // The run with the median capacity stands for the peer (its timeline feeds the charts).
  const median = [...all].sort((a, b) => a.capacity.players - b.capacity.players)[(all.length - 1) >> 1];
  return {
    peer,
    label: def.label,
    ...median,
    capacities: all.map((r) => r.capacity.players),
    runs: all.map(({ timeline, ...rest }) => rest),
  };
});

// ------------------------------------------------------------------ report
const cap = Object.fromEntries(results.map((r) => [r.peer, r.capacity.players]));
const rows = results.map((r) => {
  const a = r.atCapacity;
  return [
    r.label,
    `${r.capacity.limited ? '' : '≥ '}${fmtInt(r.capacity.players)}`,
    cap.tachyon && r.capacity.players ? fmtX(cap.tachyon / r.capacity.players) : '—',
    a?.server ? `${a.server.cpu}%` : '—',
    a?.server ? `${a.server.rssMb} MB` : '—',
    a?.server ? `${a.server.eldMaxMs} ms` : '—',
    a?.key?.p95 !== undefined ? `${a.key.p95} ms` : '—',
    a?.view?.p95 !== undefined ? `${a.view.p95} ms` : '—',
    `${r.maxLoadgenCpuOk}%`,
    r.capacity.limited ? `t=${r.capacity.at}s: ${r.capacity.why}` : 'not reached',
  ];
});
const header = [
  'server',
  'capacity (players)',
  'Tachyon ×',
  'server CPU',
  'RSS',
  'event-loop delay max',
  'keystroke p95',
  'view p95',
  'loadgen CPU max',
  'what stopped it',
];
const md = table(header, rows, new Set([1, 2, 3, 4, 5, 6, 7, 8]));
console.log(`\n${md}\n`);
const goals = gameGoals(cap);
for (const g of goals) console.log(g);

if (o.write) {
  const stamp = new Date()
    .toISOString()
    .replace(/:/g, '-')
    .replace(/\.\d+Z$/, 'Z');
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `game-${stamp}.json`);
  const run = {
    options: o,
    command: `npm run bench:game -- ${process.argv.slice(2).join(' ')}`.trim(),
    environment: { ...env, loadgenBin: undefined, staticDir: undefined },
    results,
  };
  writeFileSync(file, `${JSON.stringify(run, null, 1)}\n`);
  writeOutputs(run, file);
}

/** The charts and the game section of RESULTS.md for one run (`file`: its JSON). */
function writeOutputs({ results, options, environment, command }, file) {
  mkdirSync(CHARTS_DIR, { recursive: true });
  const series = (f) =>
    results.map((r) => ({ label: r.label, color: PEER_COLORS[r.peer], points: r.timeline.map((row) => [row.players, f(row)]) }));
  const limit = Number(options['p95-limit-ms']);
  const charts = {
    'game-latency.svg': lineChart({
      title: 'Keystroke → own progress, p95 (ms)',
      xLabel: 'connected players',
      yLabel: 'ms',
      series: series((row) => row.key?.p95),
      limit,
      yMax: limit * 3,
    }),
    'game-cpu.svg': lineChart({
      title: 'Server CPU (% of its one core)',
      xLabel: 'connected players',
      yLabel: '%',
      series: series((row) => row.server?.cpu),
      yMax: 110,
    }),
    'game-memory.svg': lineChart({
      title: 'Server RSS (MB)',
      xLabel: 'connected players',
      yLabel: 'MB',
      series: series((row) => row.server?.rssMb),
    }),
    'game-eld.svg': lineChart({
      title: 'Server event-loop delay, max per second (ms)',
      xLabel: 'connected players',
      yLabel: 'ms',
      series: series((row) => row.server?.eldMaxMs),
      yMax: 100,
    }),
  };
  for (const [name, svg] of Object.entries(charts)) writeFileSync(path.join(CHARTS_DIR, name), svg);
  const titles = {
    'game-latency.svg': 'keystroke p95 against players',
    'game-cpu.svg': 'server CPU against players',
    'game-memory.svg': 'server RSS against players',
    'game-eld.svg': 'event-loop delay against players',
  };
  const rel = (f) => path.relative(BENCH_DIR, f).split(path.sep).join('/');
  const section = gameMarkdown({
    results,
    options,
    environment,
    file: rel(file),
    charts: Object.fromEntries(Object.keys(charts).map((n) => [rel(path.join(CHARTS_DIR, n)), titles[n]])),
    command,
  });
  const resultsFile = path.join(BENCH_DIR, 'RESULTS.md');
  writeFileSync(
    resultsFile,
    withGameSection(existsSync(resultsFile) ? readFileSync(resultsFile, 'utf8') : '# Benchmark results\n', section),
  );
  console.log(
    `bench:game: wrote ${rel(file)}, ${Object.keys(charts).length} charts in ${rel(CHARTS_DIR)} and the game section of bench/RESULTS.md`,
  );
}
