#!/usr/bin/env node
// Instructions per request: each server run under Valgrind's callgrind, its user-space
// instructions counted while wrk drives one HTTP scenario, divided by the requests answered.
// On a machine whose speed drifts (a shared VM, where the same server's CPU per request moves
// by ±20% between runs), time cannot tell a 3% change; the instruction count can: with V8 in
// single-threaded mode (`--single-threaded`: no background compiler or GC threads, so the same
// work lands in the count every time) windows of one server agree within about 0.2%.
//
//   node bench/instructions.mjs [--old ../old-worktree] [--peers uws,tachyon,tachyon-access-log]
//        [--only http-realistic-get] [--processes 3] [--windows 2] [--seconds 10] [--warmup 20] [--parallel 1]
//        [--annotate 30]   # also the 30 costliest functions per request (JS named via --perf-basic-prof)
//
// What it leaves out, read the figures with it: the kernel's share (syscalls: the same for
// every peer on one scenario, so ratios to raw uWS come out larger than CPU-time ratios) and
// what an instruction costs (cache misses, branch mispredictions). It prices JavaScript and
// native user-space work, which is what a framework layer adds. Valgrind makes everything
// ~30× slower: warm-up and windows are long in wall time for few requests.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { annotate } from './lib/callgrind-annotate.mjs';
import { ensureDebianTool, ensureWrk } from './lib/env.mjs';
import { parseWrk, wrkArgs } from './lib/measure.mjs';
import { SCENARIOS } from './lib/scenarios.mjs';

const { values: o } = parseArgs({
  options: {
    old: { type: 'string' },
    only: { type: 'string', default: 'http-realistic-get' },
    peers: { type: 'string', default: 'uws,tachyon' },
    processes: { type: 'string', default: '3' },
    parallel: { type: 'string', default: '1' },
    annotate: { type: 'string' },
    windows: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '20' },
  },
});
const scenario = SCENARIOS[o.only];
if (scenario?.kind !== 'http') {
  console.error(
    `--only takes an HTTP scenario (${Object.keys(SCENARIOS)
      .filter((s) => SCENARIOS[s].kind === 'http')
      .join(', ')})`,
  );
  process.exit(2);
}
ensureWrk(console.log);
ensureDebianTool('valgrind', 'valgrind', console.log);

const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const trees = o.old ? { before: resolve(o.old), after: here } : { now: here };
const peers = o.peers.split(',');
if (peers[0] !== 'uws') peers.unshift('uws');

function freePort() {
  return new Promise((res, rej) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
    s.on('error', rej);
  });
}

function run(cmd, args) {
  return new Promise((res, rej) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    p.on('error', rej);
    p.on('close', (code) => (code === 0 ? res(out) : rej(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${out}`))));
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The `totals:` of callgrind's nth dump, once the file is complete. */
async function totals(dir, n) {
  const file = join(dir, `cg.out.${n}`);
  for (let i = 0; i < 600; i++) {
    if (existsSync(file)) {
      const m = /^totals: (\d+)/m.exec(readFileSync(file, 'latin1'));
      if (m) return Number(m[1]);
    }
    await sleep(100);
  }
  throw new Error(`callgrind wrote no dump ${file}`);
}

/** Median instructions per request of one server in one tree. */
async function measure(tree, peer) {
  const dir = mkdtempSync(join(os.tmpdir(), 'tachyon-callgrind-'));
  const port = await freePort();
  const args = ['--tool=callgrind', '--instr-atstart=no', '--smc-check=all-non-file', `--callgrind-out-file=${join(dir, 'cg.out')}`];
  // Fixed seeds: V8 randomizes its hash seed per process, which moves dictionary lookups.
  args.push(process.execPath, '--single-threaded', '--hash-seed=1', '--random-seed=1');
  // JS function names for annotate(); the V8 log that flag also writes goes to the temporary
  // directory, not isolate-*-v8.log files in the tree.
  if (o.annotate !== undefined) args.push('--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${join(dir, 'v8.log')}`);
  args.push(join(tree, 'bench', 'servers', `${peer}.mjs`));
  const child = spawn('valgrind', args, { cwd: tree, env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  try {
    await new Promise((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`${peer}: no READY in 180 s\n${stderr}`)), 180_000);
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        if (/^READY \d+$/m.test(out)) {
          clearTimeout(timer);
          res();
        }
      });
      child.on('exit', (code) => rej(new Error(`${peer} exited ${code} before READY\n${stderr}`)));
    });
    const url = `http://127.0.0.1:${port}${scenario.path}`;
    const wrk = (s) => run(wrkArgs(o.only, url, s, false)[0], wrkArgs(o.only, url, s, false).slice(1));
    await wrk(Number(o.warmup));
    const perRequest = [];
    for (let w = 1; w <= Number(o.windows); w++) {
      await run('callgrind_control', ['-i', 'on', String(child.pid)]);
      const r = parseWrk(await wrk(Number(o.seconds)));
      await run('callgrind_control', ['-i', 'off', String(child.pid)]);
      await run('callgrind_control', ['-d', String(child.pid)]);
      const n = await totals(dir, w);
      if (!r.count || r.non2xx > 0) throw new Error(`${peer}: ${r.count} requests, ${r.non2xx} not 2xx`);
      perRequest.push(n / r.count);
      if (w === 1 && o.annotate !== undefined) {
        const lines = annotate(join(dir, 'cg.out.1'), `/tmp/perf-${child.pid}.map`, r.count, Number(o.annotate));
        console.log(`${peer} (${tree}), instructions per request by function, first window:\n${lines.join('\n')}`);
      }
    }
    return perRequest;
  } finally {
    child.kill('SIGKILL');
    await new Promise((r) => (child.exitCode === null && child.signalCode === null ? child.once('exit', r) : r()));
    rmSync(dir, { recursive: true, force: true });
    rmSync(`/tmp/perf-${child.pid}.map`, { force: true });
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (n) => Math.round(n).toLocaleString('en-US');

/** Every (round, tree, peer) measurement, run `--parallel` at a time (counts do not depend on load). */
const jobs = [];
for (let round = 1; round <= Number(o.processes); round++)
  for (const [name, tree] of Object.entries(trees))
    for (const peer of peers) if (existsSync(join(tree, 'bench', 'servers', `${peer}.mjs`))) jobs.push({ name, tree, peer });
/** perProcess[tree][peer] = one figure per server process (the median of its windows). */
const perProcess = {};
let next = 0;
async function worker() {
  while (next < jobs.length) {
    const { name, tree, peer } = jobs[next++];
    const xs = await measure(tree, peer);
    ((perProcess[name] ??= {})[peer] ??= []).push(median(xs));
    console.log(`${name} ${peer}: ${xs.map(fmt).join(', ')} instructions/request`);
  }
}
await Promise.all(Array.from({ length: Math.max(1, Number(o.parallel)) }, worker));

const results = {};
for (const name of Object.keys(trees)) {
  results[name] = {};
  for (const peer of peers) {
    const xs = perProcess[name]?.[peer];
    if (xs === undefined) continue;
    results[name][peer] = median(xs);
    const spread = ((Math.max(...xs) - Math.min(...xs)) / median(xs)) * 100;
    console.log(`${name} ${peer}: processes ${xs.map(fmt).join(', ')} (median ${fmt(median(xs))}, spread ${spread.toFixed(1)}%)`);
  }
}

console.log(
  `\n${o.only}, user-space instructions per request (callgrind, V8 --single-threaded), median of ${o.processes} server processes, each the median of ${o.windows} windows of ${o.seconds} s`,
);
const names = Object.keys(trees);
const head = names.flatMap((n) => [n, `${n} × uWS`]);
console.log(`| server | ${head.join(' | ')} |${names.length === 2 ? ' change |' : ''}`);
console.log(`|---|${head.map(() => '---:').join('|')}|${names.length === 2 ? '---:|' : ''}`);
for (const peer of peers) {
  const cells = names.flatMap((n) => {
    const v = results[n][peer];
    return v === undefined ? ['—', '—'] : [fmt(v), (v / results[n].uws).toFixed(3)];
  });
  const [a, b] = names.map((n) => results[n][peer]);
  const change =
    names.length === 2 && a !== undefined && b !== undefined ? ` ${(((b - a) / a) * 100).toFixed(1)}% |` : names.length === 2 ? ' — |' : '';
  console.log(`| ${peer} | ${cells.join(' | ')} |${change}`);
}
