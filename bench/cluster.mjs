#!/usr/bin/env node
// What cluster() costs and what two workers give on this machine, with the suite's own
// scenarios, load generators and CPU accounting (lib/). Configurations, in alternating runs,
// each a fresh server process:
//
//   in-process          servers/tachyon.mjs: app.listen(), one thread (the reference)
//   cluster-1           servers/tachyon-cluster.mjs with 1 worker thread behind the acceptor
//   cluster-2           2 worker threads, both on the server CPU: cross-worker publishing
//                       (ws-fanout: the subscribers are spread over the two workers) costs
//                       CPU, and nothing can scale on one core
//   in-process-unpinned the reference without taskset: server and generator share both cores
//   cluster-2-unpinned  2 workers without taskset: the only run where a second core can help,
//                       but the generator competes for the same two cores (read it as such)
//
// Server CPU is the whole process (every thread: acceptor, workers) from /proc, per request or
// per delivery. Medians of --runs.
//
//   npm run bench:cluster
//   node bench/cluster.mjs --runs 3 --duration 3 --only http-hello,ws-fanout
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
{
  const pinned = path.join(BENCH_DIR, '..', 'node_modules', 'node', 'bin', 'node');
  const pinnedVersion = existsSync(pinned)
    ? JSON.parse(readFileSync(path.join(BENCH_DIR, '..', 'node_modules', 'node', 'package.json'), 'utf8')).version
    : null;
  if (pinnedVersion && process.versions.node !== pinnedVersion) {
    const r = spawnSync(pinned, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
    process.exit(r.status ?? 1);
  }
}
const { ensureLoadgen, ensureWrk, environment } = await import('./lib/env.mjs');
const { probeRuntimes } = await import('./lib/peers.mjs');
const { installSignalHandlers, startServer, stopServer, wasInterrupted } = await import('./lib/procs.mjs');
const { measureHttp, measureWs } = await import('./lib/measure.mjs');
const { SCENARIOS } = await import('./lib/scenarios.mjs');

const CONFIGS = {
  'in-process': { script: 'tachyon.mjs', pin: true },
  'cluster-1': { script: 'tachyon-cluster.mjs', workers: 1, pin: true },
  'cluster-2': { script: 'tachyon-cluster.mjs', workers: 2, pin: true },
  'in-process-unpinned': { script: 'tachyon.mjs', pin: false },
  'cluster-2-unpinned': { script: 'tachyon-cluster.mjs', workers: 2, pin: false },
};
const SCENARIO_LIST = ['http-hello', 'http-realistic-get', 'ws-fanout'];

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    duration: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    only: { type: 'string' },
    configs: { type: 'string' },
  },
  strict: true,
});
const runs = Number(values.runs);
const scenarios = values.only ? values.only.split(',') : SCENARIO_LIST;
const configs = values.configs ? values.configs.split(',') : Object.keys(CONFIGS);
for (const s of scenarios) if (!SCENARIO_LIST.includes(s)) throw new Error(`--only: one of ${SCENARIO_LIST.join(', ')}`);
for (const c of configs) if (!CONFIGS[c]) throw new Error(`--configs: one of ${Object.keys(CONFIGS).join(', ')}`);
const opts = { runs, duration: Number(values.duration), warmup: Number(values.warmup), hold: 1 };

installSignalHandlers();
const log = (line) => console.log(line);
ensureWrk(log);
const loadgen = scenarios.includes('ws-fanout') ? ensureLoadgen(log) : { bin: undefined };
const baseEnv = environment(probeRuntimes());
baseEnv.loadgenBin = loadgen.bin;
if (!baseEnv.pin) console.log('taskset is missing: nothing is pinned, every configuration runs unpinned');

const results = [];
for (const scenario of scenarios) {
  const sc = SCENARIOS[scenario];
  for (let run = 1; run <= runs; run++) {
    for (const config of configs) {
      const c = CONFIGS[config];
      const env = c.pin ? baseEnv : { ...baseEnv, pin: null, loadCpu: baseEnv.serverCpu };
      process.env.TACHYON_WORKERS = String(c.workers ?? 0);
      let server;
      try {
        // The peer name 'tachyon' selects Tachyon's protocol on ws-fanout (lib/scenarios.mjs).
        server = await startServer('tachyon', [process.execPath, path.join(BENCH_DIR, 'servers', c.script)], env);
        const m = sc.kind === 'http' ? await measureHttp(server, scenario, opts, env) : await measureWs(server, scenario, opts, env);
        results.push({
          scenario,
          config,
          run,
          perSec: m.perSec,
          cpuUsPer: m.cpuUsPer ?? (m.serverCpuS * 1e6) / m.count,
          serverBusy: m.serverBusy,
          genBusy: m.genBusy,
          errors: m.errors,
          missing: m.missing,
          p50Ms: m.latencyMs?.p50,
          p99Ms: m.latencyMs?.p99,
        });
        const r = results.at(-1);
        log(
          `  ${scenario.padEnd(20)} ${config.padEnd(20)} run ${run}: ${Math.round(r.perSec).toLocaleString('en')}/s, ${r.cpuUsPer.toFixed(2)} µs server CPU each, server ${Math.round(r.serverBusy * 100)}% busy, generator ${Math.round((r.genBusy ?? 0) * 100)}%, latency p50 ${r.p50Ms?.toFixed(2)} ms p99 ${r.p99Ms?.toFixed(2)} ms${r.errors ? `, ${r.errors} errors` : ''}${r.missing ? `, ${r.missing} missing` : ''}`,
        );
      } catch (err) {
        if (wasInterrupted()) process.exit(130);
        results.push({ scenario, config, run, failure: err.message.slice(0, 500) });
        log(`  ${scenario} ${config} run ${run}: FAILED ${err.message.split('\n')[0]}`);
      } finally {
        if (server) await stopServer(server);
      }
    }
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const lines = [
  '| scenario | configuration | per second | server CPU µs per request/delivery | vs in-process (CPU each) | server busy | generator busy | latency p50 / p99 ms |',
  '|---|---|---:|---:|---:|---:|---:|---:|',
];
const summary = {};
for (const scenario of scenarios) {
  for (const config of configs) {
    const ok = results.filter((r) => r.scenario === scenario && r.config === config && !r.failure);
    if (!ok.length) {
      lines.push(`| ${scenario} | ${config} | failed | | | | | |`);
      continue;
    }
    const s = {
      perSec: median(ok.map((r) => r.perSec)),
      cpuUsPer: median(ok.map((r) => r.cpuUsPer)),
      serverBusy: median(ok.map((r) => r.serverBusy)),
      genBusy: median(ok.map((r) => r.genBusy ?? 0)),
      p50Ms: median(ok.map((r) => r.p50Ms ?? 0)),
      p99Ms: median(ok.map((r) => r.p99Ms ?? 0)),
    };
    (summary[scenario] ??= {})[config] = s;
  }
  for (const config of configs) {
    const s = summary[scenario]?.[config];
    if (!s) continue;
    const ref = summary[scenario][config.endsWith('unpinned') ? 'in-process-unpinned' : 'in-process'];
    const vs = ref ? `${((s.cpuUsPer / ref.cpuUsPer - 1) * 100).toFixed(0)}%` : '';
    lines.push(
      `| ${scenario} | ${config} | ${Math.round(s.perSec).toLocaleString('en')} | ${s.cpuUsPer.toFixed(2)} | ${config.startsWith('in-process') ? '' : (vs.startsWith('-') ? '' : '+') + vs} | ${Math.round(s.serverBusy * 100)}% | ${Math.round(s.genBusy * 100)}% | ${s.p50Ms.toFixed(2)} / ${s.p99Ms.toFixed(2)} |`,
    );
  }
}
console.log(`\n${lines.join('\n')}\n`);
const dir = path.join(BENCH_DIR, 'results');
mkdirSync(dir, { recursive: true });
const file = path.join(dir, `cluster-${new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19)}Z.json`);
writeFileSync(file, JSON.stringify({ environment: { ...baseEnv, loadgenBin: undefined }, opts, configs, results, summary }, null, 2));
console.log(`results: ${path.relative(process.cwd(), file)}`);
