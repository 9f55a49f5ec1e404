// The frame of a benchmark script that measures one server feature with a Node load process
// (bench/sse-fanout.mjs, bench/ws-request.mjs): the server is the same script run with
// `--serve`, a fresh child process per run pinned to CPU 0 (procs.mjs startServer); this
// process pins itself, all its threads, to CPU 1 and is the load. A measured window reads the
// server's CPU from /proc/<pid>/stat, the load's own CPU, and the other work on both cores
// (measure.mjs), as the suite does (bench/README.md, Method).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { GENERATOR_BOUND, interference } from './measure.mjs';
import { cpuStat, cpuTicks, installSignalHandlers, killAll, startServer, stopServer } from './procs.mjs';
import { BENCH_DIR, BenchError, RESULTS_DIR, fmtPct, median, sh, which } from './util.mjs';

/**
 * The command line: `own` options (name → default string) plus the shared ones. `--smoke`
 * (CI, through `npm run bench -- --smoke`): one short run that only checks the script works.
 */
export function benchOptions(own, usage) {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        ...Object.fromEntries(Object.entries(own).map(([k, d]) => [k, { type: 'string', default: d }])),
        runs: { type: 'string', default: '3' },
        duration: { type: 'string', default: '3' },
        warmup: { type: 'string', default: '1' },
        smoke: { type: 'boolean', default: false },
        write: { type: 'boolean', default: false },
        serve: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    }));
  } catch (err) {
    usageError(`${err.message}\n\n${usage}`);
  }
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  if (values.smoke) Object.assign(values, { runs: '1', duration: '0.5', warmup: '0.2', write: false });
  for (const k of ['runs', 'duration', 'warmup']) {
    const n = Number(values[k]);
    if (!Number.isFinite(n) || n < 0 || (k === 'runs' && (!Number.isInteger(n) || n < 1)) || (k === 'duration' && n === 0))
      usageError(`--${k} must be a positive number${k === 'runs' ? ' (whole)' : ''}, got ${values[k]}`);
    values[k] = n;
  }
  return values;
}

function usageError(message) {
  console.error(message);
  process.exit(2);
}

/** A list of positive whole numbers (`--outstanding 1,16`), or a usage error naming `name`. */
export function positiveInts(value, name) {
  const list = String(value).split(',').map(Number);
  if (!list.every((n) => Number.isInteger(n) && n > 0)) usageError(`--${name} must be positive whole numbers, got ${value}`);
  return list;
}

/** Runs the script's main(): a failure prints its message (a BenchError without the stack) and exits 1. */
export async function runMain(name, main) {
  try {
    await main();
  } catch (err) {
    console.error(`${name}: ${err instanceof BenchError ? err.message : err.stack}`);
    killAll();
    process.exit(1);
  }
}

/** The pinning and the clock: server on CPU 0, this process (the load) on CPU 1. */
export function loadSide() {
  const cpus = os.availableParallelism?.() ?? os.cpus().length;
  const env = { pin: which('taskset') && cpus >= 2, serverCpu: 0, loadCpu: 1, cpus, clkTck: Number(sh('getconf', ['CLK_TCK'])) || 100 };
  if (env.pin) spawnSync('taskset', ['-a', '-cp', String(env.loadCpu), String(process.pid)], { stdio: 'ignore' });
  else console.log('WARNING: no taskset or fewer than 2 CPUs: nothing is pinned, the figures are not meaningful');
  installSignalHandlers();
  return env;
}

/** Runs `fn(server)` against a fresh `--serve` process of `script` (extra argv after it). */
export async function withServer(name, script, argv, env, fn) {
  const server = await startServer(name, [process.execPath, script, '--serve', ...argv], env);
  try {
    const r = await fn(server);
    if (server.died) throw new Error(`${name} server died (${server.died}): ${server.stderr().slice(-1000)}`);
    return r;
  } finally {
    await stopServer(server);
  }
}

/** The start of a measured window. */
export function windowStart(server, env) {
  return {
    t: performance.now(),
    ticks: cpuTicks(server.pid),
    self: process.cpuUsage(),
    sys: [cpuStat(env.serverCpu), cpuStat(env.loadCpu)],
  };
}

/** The end of a window begun with windowStart: seconds, server and load CPU, flags. */
export function windowEnd(start, server, env) {
  const ticks = cpuTicks(server.pid);
  const self = process.cpuUsage(start.self);
  const sys = [cpuStat(env.serverCpu), cpuStat(env.loadCpu)];
  const wallS = (performance.now() - start.t) / 1000;
  const serverCpuS = (ticks - start.ticks) / env.clkTck;
  const loadCpuS = (self.user + self.system) / 1e6;
  return {
    wallS,
    serverCpuS,
    serverBusy: serverCpuS / wallS,
    loadCpuS,
    loadBusy: loadCpuS / wallS,
    generatorBound: loadCpuS / wallS >= GENERATOR_BOUND,
    ...interference(env, start.sys, sys, ticks - start.ticks, loadCpuS),
  };
}

/** `measured` runs' flags in words: generator-bound, noisy. */
export function flags(runs) {
  const f = [];
  const bound = runs.filter((r) => r.generatorBound).length;
  const noisy = runs.filter((r) => r.contended).length;
  if (bound)
    f.push(`load-bound in ${bound}/${runs.length} (load CPU ≥ ${fmtPct(GENERATOR_BOUND)}: the rate is a floor, compare CPU per unit)`);
  if (noisy) f.push(`noisy in ${noisy}/${runs.length}`);
  return f.join('; ');
}

/** Median of `key` over runs. */
export const med = (runs, key) => median(runs.map((r) => (typeof key === 'function' ? key(r) : r[key])));

/** Resolves when `cond()` holds (polled), rejects with `what()` after `ms`. */
export async function until(cond, ms, what) {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error(what());
    await new Promise((r) => setTimeout(r, 5));
  }
}

export const sleep = (s) => new Promise((r) => setTimeout(r, s * 1000));

/**
 * With --write: the raw figures as results/<name>-<stamp>.json, and a section of RESULTS.md
 * between `<!-- bench:<name> -->` markers (replaced, or appended; run.mjs keeps it): `title`,
 * the command and the date, `about` (the load and the method), the machine, `table`.
 */
export function writeResults(name, { title, about, table, options, runs }) {
  const now = new Date().toISOString();
  const command = `npm run bench:${name} -- ${process.argv.slice(2).join(' ')}`.trim();
  mkdirSync(RESULTS_DIR, { recursive: true });
  const json = path.join(RESULTS_DIR, `${name}-${now.replace(/\.\d+Z$/, 'Z').replaceAll(':', '-')}.json`);
  writeFileSync(json, `${JSON.stringify({ command, options, startedAt: now, machine: machine(), runs }, null, 1)}\n`);
  const rel = path.relative(BENCH_DIR, json);
  const markdown = `## ${title}

Generated by \`bench/${name}.mjs\` on ${now.slice(0, 16).replace('T', ' ')} UTC (\`${command}\`); raw figures in [\`${rel}\`](${rel}). ${about} ${machine()}.

${table}

Ratios within this run only; on the shared 2-vCPU VM the figures are indicative.`;
  const file = path.join(BENCH_DIR, 'RESULTS.md');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmark results\n';
  const block = `<!-- bench:${name} -->\n${markdown}\n<!-- /bench:${name} -->`;
  const marked = new RegExp(`<!-- bench:${name} -->[\\s\\S]*?<!-- /bench:${name} -->`);
  writeFileSync(file, marked.test(text) ? text.replace(marked, () => block) : `${text.trimEnd()}\n\n${block}\n`);
  console.log(`wrote bench/${rel} and the ${name} section of bench/RESULTS.md`);
}

/** The --serve side: an App that `declare` fills, listening on PORT, announced with READY (servers/shared.mjs). */
export async function serveApp(declare) {
  const { App } = await import('@tachyon/server');
  const { portFromEnv, ready } = await import('../servers/shared.mjs');
  const app = new App();
  declare(app);
  const server = await app.listen({ port: portFromEnv(), host: '127.0.0.1' });
  ready(server.port);
}

/** The machine in one line, for the RESULTS.md section. */
export function machine() {
  const model = /^model name\s*:\s*(.+)$/m.exec(existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '')?.[1];
  // os.cpus(): this process is pinned to one CPU, which availableParallelism() would report
  return `Node ${process.version}, ${model ?? os.cpus()[0]?.model} (${os.cpus().length} CPUs), load average at the end ${os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}`;
}
