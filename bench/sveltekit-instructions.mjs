#!/usr/bin/env node
// Instructions per request of the SvelteKit adapters (bench/sveltekit/app's builds), counted
// as bench/instructions.mjs counts the framework peers: each server under Valgrind's callgrind
// with V8 single-threaded and fixed seeds, its user-space instructions while wrk drives one
// path, divided by the requests answered. Other load on the machine can only add to a count
// (work done per second, not per request, divided by the fewer requests a starved server
// answers), so on a busy VM run several processes and read each server's lowest count.
//
//   node bench/sveltekit-instructions.mjs [--path /hello] [--servers tachyon,uws,node,mount]
//        [--processes 2] [--windows 2] [--seconds 5] [--warmup 10] [--annotate 30]
//
// Builds the app first when a build is missing (`node bench/sveltekit.mjs` builds all three).
// Servers: tachyon (@tachyon/sveltekit), uws (svelte-adapter-uws), node (adapter-node),
// mount / get (bench/sveltekit/app/servers/tachyon-layers.mjs), raw (raw uWebSockets.js).
// Every request carries `x-no-dedup: 1`, as bench/sveltekit.mjs's endpoint scenario does.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { annotate } from './lib/callgrind-annotate.mjs';
import { ensureDebianTool, ensureWrk } from './lib/env.mjs';
import { parseWrk } from './lib/measure.mjs';

const { values: o } = parseArgs({
  options: {
    path: { type: 'string', default: '/hello' },
    servers: { type: 'string', default: 'tachyon,uws' },
    processes: { type: 'string', default: '2' },
    windows: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '10' },
    annotate: { type: 'string' },
  },
});
const APP = join(dirname(fileURLToPath(import.meta.url)), 'sveltekit', 'app');
const SERVERS = {
  tachyon: { argv: ['build-tachyon/index.js'], adapter: 'tachyon' },
  uws: { argv: ['build-uws/index.js'], adapter: 'uws' },
  node: { argv: ['build-node/index.js'], adapter: 'node' },
  mount: { argv: ['servers/tachyon-layers.mjs'], env: { BENCH_LAYER: 'mount' } },
  get: { argv: ['servers/tachyon-layers.mjs'], env: { BENCH_LAYER: 'get' } },
  raw: { argv: ['servers/raw-uws.mjs'] },
};
const names = o.servers.split(',');
for (const n of names) if (!SERVERS[n]) throw new Error(`unknown server ${n}: ${Object.keys(SERVERS).join(', ')}`);
ensureWrk(console.log);
ensureDebianTool('valgrind', 'valgrind', console.log);
if (!existsSync(join(APP, 'node_modules', '.package-lock.json'))) throw new Error('bench/sveltekit/app is not installed: npm ci there');
// svelte-adapter-uws loads uWebSockets.js at build time too: the binary made loadable here first.
const { ensureLoadable } = await import(join(APP, '..', '..', '..', 'scripts', 'uws-glibc-compat.mjs'));
ensureLoadable(join(APP, 'node_modules'));
for (const n of names) {
  const { argv, adapter } = SERVERS[n];
  if (adapter !== undefined && !existsSync(join(APP, argv[0]))) {
    console.log(`building with ${adapter}`);
    const r = spawnSync(process.execPath, [join(APP, 'node_modules', 'vite', 'bin', 'vite.js'), 'build'], {
      cwd: APP,
      env: { ...process.env, BENCH_ADAPTER: adapter },
      stdio: 'inherit',
    });
    if (r.status !== 0) throw new Error(`vite build (${adapter}) failed`);
  }
}
// The layer servers answer with the page's bytes: any HTML does for counting the bridge.
const HTML = join(APP, '.bench-page.html');
if (!existsSync(HTML)) writeFileSync(HTML, '<!doctype html><p>hello</p>');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const freePort = () =>
  new Promise((res, rej) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
    s.on('error', rej);
  });
const run = (cmd, args) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stdout}${r.stderr}`);
  return r.stdout;
};
async function listening(port, child) {
  for (const until = Date.now() + 180_000; Date.now() < until; await sleep(200)) {
    if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}`);
    const ok = await new Promise((res) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        res(true);
      });
      s.once('error', () => res(false));
    });
    if (ok) return;
  }
  throw new Error(`port ${port} never opened under valgrind`);
}
/** callgrind's nth dump total, once written. */
async function totals(file) {
  for (let i = 0; i < 600; i++, await sleep(100)) {
    const m = existsSync(file) && /^totals: (\d+)/m.exec(readFileSync(file, 'latin1'));
    if (m) return Number(m[1]);
  }
  throw new Error(`callgrind wrote no ${file}`);
}

async function measure(name) {
  const spec = SERVERS[name];
  const dir = mkdtempSync(join(os.tmpdir(), 'kit-callgrind-'));
  const port = await freePort();
  const args = ['--tool=callgrind', '--instr-atstart=no', '--smc-check=all-non-file', `--callgrind-out-file=${join(dir, 'cg.out')}`];
  args.push(process.execPath, '--single-threaded', '--hash-seed=1', '--random-seed=1');
  if (o.annotate !== undefined) args.push('--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${join(dir, 'v8.log')}`);
  // No HOST (the servers listen on every interface): valgrind names its vgdb pipes after $HOST,
  // and callgrind_control, which looks for them under the machine's name, would not find them.
  const env = { ...process.env, ...spec.env, PORT: String(port), BENCH_HTML: HTML, NODE_ENV: 'production' };
  delete env.HOST;
  const child = spawn('valgrind', [...args, ...spec.argv], { cwd: APP, env, stdio: ['ignore', 'ignore', 'ignore'] });
  const wrk = (s) => parseWrk(run('wrk', ['-t1', '-c10', `-d${s}s`, '-H', 'x-no-dedup: 1', `http://127.0.0.1:${port}${o.path}`]));
  try {
    await listening(port, child);
    wrk(Number(o.warmup));
    const xs = [];
    for (let w = 1; w <= Number(o.windows); w++) {
      run('callgrind_control', ['-i', 'on', String(child.pid)]);
      const r = wrk(Number(o.seconds));
      run('callgrind_control', ['-i', 'off', String(child.pid)]);
      run('callgrind_control', ['-d', String(child.pid)]);
      if (!r.count || r.non2xx > 0) throw new Error(`${name}: ${r.count} requests, ${r.non2xx} not 2xx`);
      xs.push((await totals(join(dir, `cg.out.${w}`))) / r.count);
      if (w === 1 && o.annotate !== undefined)
        console.log(
          `${name}, instructions per request by function:\n${annotate(join(dir, 'cg.out.1'), `/tmp/perf-${child.pid}.map`, r.count, Number(o.annotate)).join('\n')}`,
        );
    }
    return median(xs);
  } finally {
    child.kill('SIGKILL');
    if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
    rmSync(`/tmp/perf-${child.pid}.map`, { force: true });
  }
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
const fmt = (n) => Math.round(n).toLocaleString('en-US');

const perServer = Object.fromEntries(names.map((n) => [n, []]));
for (let p = 0; p < Number(o.processes); p++)
  for (const n of names) {
    const x = await measure(n);
    perServer[n].push(x);
    console.log(`${n}: ${fmt(x)} instructions/request`);
  }
const base = median(perServer[names.includes('uws') ? 'uws' : names[0]]);
console.log(
  `\n${o.path}, user-space instructions per request (callgrind, V8 --single-threaded), median of ${o.processes} processes × ${o.windows} windows of ${o.seconds} s`,
);
console.log(`| server | instructions/request | ÷ ${names.includes('uws') ? 'svelte-adapter-uws' : names[0]} | processes |`);
console.log('|---|---:|---:|---|');
for (const n of names)
  console.log(
    `| ${n} | ${fmt(median(perServer[n]))} | ${(median(perServer[n]) / base).toFixed(3)} | ${perServer[n].map(fmt).join(', ')} |`,
  );
