#!/usr/bin/env node
// Instructions per request: each server run under Valgrind's callgrind, its user-space
// instructions counted while wrk drives one HTTP scenario, divided by the requests answered.
// WebSocket fan-out and echo (`--only ws-fanout`) are driven by bench/loadgen and priced per
// delivery or message (two runs of different lengths, by difference: see measure()).
// On a machine whose speed drifts (a shared VM, where the same server's CPU per request moves
// by ±20% between runs), time cannot tell a 3% change; the instruction count can: with V8 in
// single-threaded mode (`--single-threaded`: no background compiler or GC threads, so the same
// work lands in the count every time) windows of one server agree within about 0.2%.
//
//   node bench/instructions.mjs [--old ../old-worktree [--old ../older-worktree]] [--peers uws,tachyon,tachyon-access-log]
//        [--only http-realistic-get[,http-hello-pipelined]] [--processes 3] [--windows 2] [--seconds 10] [--warmup 20] [--parallel 1]
//        [--annotate 30]   # also the 30 costliest functions per request (JS named via --perf-basic-prof)
//        [--inclusive]     # --annotate counts each function with the functions it called
//
// Several --old trees (oldest first) put each commit of a series in one invocation: the table
// has a column per tree and the change from the first. Raw uWS is counted once, in this tree,
// when bench/servers/uws.mjs is the same file in every tree (the same code on the same node and
// addon: its count does not depend on the tree), which saves a Valgrind run per extra tree.
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
import { ensureDebianTool, ensureLoadgen, ensureWrk, LOADGEN_BIN } from './lib/env.mjs';
import { loadgenArgs, parseWrk, wrkArgs } from './lib/measure.mjs';
import { SCENARIOS } from './lib/scenarios.mjs';

const { values: o } = parseArgs({
  options: {
    old: { type: 'string', multiple: true, default: [] },
    only: { type: 'string', default: 'http-realistic-get' },
    peers: { type: 'string', default: 'uws,tachyon' },
    processes: { type: 'string', default: '3' },
    parallel: { type: 'string', default: '1' },
    annotate: { type: 'string' },
    inclusive: { type: 'boolean', default: false },
    windows: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '20' },
  },
});
const scenarioNames = o.only.split(',');
const countable = (s) => SCENARIOS[s].kind === 'http' || SCENARIOS[s].mode === 'fanout' || SCENARIOS[s].mode === 'echo';
for (const name of scenarioNames) {
  if (SCENARIOS[name] !== undefined && countable(name)) continue;
  console.error(`--only takes HTTP, fan-out and echo scenarios (${Object.keys(SCENARIOS).filter(countable).join(', ')}), got ${name}`);
  process.exit(2);
}
ensureWrk(console.log);
if (scenarioNames.some((s) => SCENARIOS[s].kind === 'ws')) {
  const built = ensureLoadgen(console.log);
  if (built.error) {
    console.error(built.error);
    process.exit(2);
  }
}
ensureDebianTool('valgrind', 'valgrind', console.log);

const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const oldTrees = o.old.map((t) => resolve(t));
const trees =
  oldTrees.length === 0
    ? { now: here }
    : oldTrees.length === 1
      ? { before: oldTrees[0], after: here }
      : Object.fromEntries([...oldTrees.map((t, i) => [`before${i + 1}`, t]), ['after', here]]);
const peers = o.peers.split(',');
if (peers[0] !== 'uws') peers.unshift('uws');
const uwsFile = (tree) => readFileSync(join(tree, 'bench', 'servers', 'uws.mjs'), 'utf8');
const uwsOnce = Object.values(trees).every((t) => uwsFile(t) === uwsFile(here));

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

/**
 * One bench/loadgen run of a WebSocket scenario (the suite's load, `seconds` long, no warm-up of
 * its own): the deliveries (fan-out) or messages (echo) it counted over its window. Its exit
 * status is not checked: under Valgrind the server is slow, and a run may end with messages
 * still on their way (what the report calls missing), which the difference method absorbs.
 */
async function loadgen(scenarioName, peer, port, seconds) {
  const argv = loadgenArgs(scenarioName, peer, port, { duration: seconds, warmup: 0 }, { loadgenBin: LOADGEN_BIN });
  const text = await new Promise((res, rej) => {
    const p = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err = (err + d).slice(-2000)));
    p.on('error', rej);
    p.on('close', (code) => (code === 2 ? rej(new Error(`loadgen refused its arguments: ${err}`)) : res(out)));
  });
  const r = JSON.parse(text.trim().split('\n').pop());
  return SCENARIOS[scenarioName].mode === 'fanout' ? Math.round(r.delivered_per_s * r.measured_s) : r.messages;
}

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

/** Median instructions per request of one server in one tree, on one scenario. */
async function measure(tree, peer, scenarioName) {
  const scenario = SCENARIOS[scenarioName];
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
    /** Instructions counted while `load()` runs (it resolves to the requests or deliveries it saw), and that count. */
    let dumps = 0;
    const counted = async (load) => {
      await run('callgrind_control', ['-i', 'on', String(child.pid)]);
      const count = await load();
      await run('callgrind_control', ['-i', 'off', String(child.pid)]);
      await run('callgrind_control', ['-d', String(child.pid)]);
      return { instructions: await totals(dir, ++dumps), count, dump: join(dir, `cg.out.${dumps}`) };
    };
    const perUnit = [];
    if (scenario.kind === 'ws') {
      // A loadgen run connects, subscribes and closes its sockets besides the deliveries, and
      // its deliveries are counted over its window only: two runs, short and long, and the
      // difference of their instructions over the difference of their deliveries prices one
      // delivery, the fixed costs of a run cancelling out.
      const fanout = (s) => loadgen(scenarioName, peer, port, s);
      await fanout(Number(o.warmup));
      const long = Number(o.seconds);
      const short = Math.max(1, Math.round(long / 3));
      for (let w = 1; w <= Number(o.windows); w++) {
        const a = await counted(() => fanout(short));
        const b = await counted(() => fanout(long));
        if (b.count <= a.count) throw new Error(`${peer}: ${a.count} then ${b.count} deliveries: no difference to price`);
        perUnit.push((b.instructions - a.instructions) / (b.count - a.count));
        if (w === 1 && o.annotate !== undefined) {
          const lines = annotate(b.dump, `/tmp/perf-${child.pid}.map`, b.count, Number(o.annotate), o.inclusive);
          console.log(
            `${peer} (${tree}), instructions per delivery by function, the long run of the first window (its fixed costs included):\n${lines.join('\n')}`,
          );
        }
      }
      return perUnit;
    }
    const url = `http://127.0.0.1:${port}${scenario.path}`;
    const wrk = async (s) => {
      const [cmd, ...rest] = wrkArgs(scenarioName, url, s, false);
      const r = parseWrk(await run(cmd, rest));
      if (!r.count || r.non2xx > 0) throw new Error(`${peer}: ${r.count} requests, ${r.non2xx} not 2xx`);
      return r.count;
    };
    await wrk(Number(o.warmup));
    for (let w = 1; w <= Number(o.windows); w++) {
      const { instructions, count, dump } = await counted(() => wrk(Number(o.seconds)));
      perUnit.push(instructions / count);
      if (w === 1 && o.annotate !== undefined) {
        const lines = annotate(dump, `/tmp/perf-${child.pid}.map`, count, Number(o.annotate), o.inclusive);
        console.log(`${peer} (${tree}), instructions per request by function, first window:\n${lines.join('\n')}`);
      }
    }
    return perUnit;
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

for (const scenarioName of scenarioNames) await report(scenarioName);

/** Counts every (round, tree, peer) of one scenario, run `--parallel` at a time (counts do not depend on load), and prints its table. */
async function report(scenarioName) {
  const jobs = [];
  for (let round = 1; round <= Number(o.processes); round++)
    for (const [name, tree] of Object.entries(trees))
      for (const peer of peers) {
        if (peer === 'uws' && uwsOnce && tree !== here) continue;
        if (existsSync(join(tree, 'bench', 'servers', `${peer}.mjs`))) jobs.push({ name, tree, peer });
      }
  /** perProcess[tree][peer] = one figure per server process (the median of its windows). */
  const perProcess = {};
  let next = 0;
  async function worker() {
    while (next < jobs.length) {
      const { name, tree, peer } = jobs[next++];
      const xs = await measure(tree, peer, scenarioName);
      ((perProcess[name] ??= {})[peer] ??= []).push(median(xs));
      console.log(`${scenarioName} ${name} ${peer}: ${xs.map(fmt).join(', ')} instructions/${SCENARIOS[scenarioName].per}`);
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Number(o.parallel)) }, worker));

  const names = Object.keys(trees);
  const afterName = names[names.length - 1];
  const results = Object.fromEntries(names.map((name) => [name, {}]));
  for (const name of names) {
    for (const peer of peers) {
      const xs = perProcess[name]?.[peer];
      if (xs === undefined) continue;
      results[name][peer] = median(xs);
      const spread = ((Math.max(...xs) - Math.min(...xs)) / median(xs)) * 100;
      console.log(`${name} ${peer}: processes ${xs.map(fmt).join(', ')} (median ${fmt(median(xs))}, spread ${spread.toFixed(1)}%)`);
    }
  }
  if (uwsOnce) for (const name of names) results[name].uws ??= median(perProcess[afterName].uws);

  console.log(
    `\n${scenarioName}, user-space instructions per ${SCENARIOS[scenarioName].per} (callgrind, V8 --single-threaded), median of ${o.processes} server processes, each the median of ${o.windows} windows of ${o.seconds} s${uwsOnce && names.length > 1 ? '; raw uWS counted once (the same uws.mjs in every tree)' : ''}`,
  );
  const head = names.flatMap((n) => [n, `${n} × uWS`]);
  const compare = names.length >= 2;
  console.log(`| server | ${head.join(' | ')} |${compare ? ' change |' : ''}`);
  console.log(`|---|${head.map(() => '---:').join('|')}|${compare ? '---:|' : ''}`);
  for (const peer of peers) {
    const cells = names.flatMap((n) => {
      const v = results[n][peer];
      return v === undefined ? ['—', '—'] : [fmt(v), (v / results[n].uws).toFixed(3)];
    });
    const a = results[names[0]][peer];
    const b = results[afterName][peer];
    const change = compare && a !== undefined && b !== undefined ? ` ${(((b - a) / a) * 100).toFixed(1)}% |` : compare ? ' — |' : '';
    console.log(`| ${peer} | ${cells.join(' | ')} |${change}`);
  }
}
