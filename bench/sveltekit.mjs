#!/usr/bin/env node
// SvelteKit adapters compared: one tiny SvelteKit 2 app (bench/sveltekit/app) built with
// @tachyon/sveltekit, @sveltejs/adapter-node and svelte-adapter-uws (its uWebSockets.js
// pointed at the same binary as Tachyon's through `overrides`), plus raw uWebSockets.js
// answering the same bytes (the ceiling) and two Tachyon layers for the "where the time
// goes" table. Scenarios: SSR of a small page (`/`), a trivial +server.ts endpoint (`/hello`),
// a 4 KiB static asset; and that asset from @tachyon/sveltekit with WORKERS=2 as a ratio to one
// process (both unpinned, sharing the 2 cores with wrk: reported, not a scaling claim).
//
//   node bench/sveltekit.mjs                       # 3 runs of 3 s per (scenario, server)
//   node bench/sveltekit.mjs --runs 5 --duration 5
//   node bench/sveltekit.mjs --scenarios ssr,endpoint   # only these scenarios
//
// Run it through `benchlock`. The server is pinned to CPU 0 (taskset), wrk (1 thread, 100
// connections, no pipelining) to CPU 1; a fresh server process per run, 1 s of warm-up
// load first; the runs of different servers alternate; the median is reported. The app
// has its own install (bench/sveltekit/app, `npm ci` on first use, ~150 MB).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const APP = path.join(BENCH_DIR, 'sveltekit', 'app');
const REPO = path.resolve(BENCH_DIR, '..');
const NODE = process.execPath;

const { values: opts } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    duration: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    connections: { type: 'string', default: '100' },
    'no-build': { type: 'boolean', default: false },
    scenarios: { type: 'string' },
  },
});
const RUNS = Number(opts.runs);
const DURATION = Number(opts.duration);
const WARMUP = Number(opts.warmup);
const CONNECTIONS = Number(opts.connections);

function sh(cmd, args, cwd, env = {}) {
  const r = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed in ${cwd}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

// --- install and build -------------------------------------------------------------------
if (!existsSync(path.join(APP, 'node_modules', '.package-lock.json'))) {
  console.log('sveltekit bench: installing bench/sveltekit/app (npm ci, once)');
  sh('npm', ['ci', '--no-audit', '--no-fund'], APP);
}
const { ensureLoadable } = await import(path.join(REPO, 'scripts', 'uws-glibc-compat.mjs'));
ensureLoadable(path.join(APP, 'node_modules'));
if (!existsSync(path.join(REPO, 'packages', 'sveltekit', 'dist', 'index.js')))
  throw new Error('packages/sveltekit is not built: run npm run build');
if (!opts['no-build']) {
  for (const adapter of ['tachyon', 'node', 'uws']) {
    console.log(`building with ${adapter}`);
    sh(NODE, [path.join(APP, 'node_modules', 'vite', 'bin', 'vite.js'), 'build'], APP, { BENCH_ADAPTER: adapter });
  }
}

// --- servers -----------------------------------------------------------------------------
const HTML_FILE = path.join(APP, '.bench-page.html');
const SERVERS = {
  'uws (raw)': { argv: ['servers/raw-uws.mjs'] },
  'tachyon get': { argv: ['servers/tachyon-layers.mjs'], env: { BENCH_LAYER: 'get' } },
  'tachyon mount': { argv: ['servers/tachyon-layers.mjs'], env: { BENCH_LAYER: 'mount' } },
  '@tachyon/sveltekit': { argv: ['build-tachyon/index.js'] },
  'svelte-adapter-uws': { argv: ['build-uws/index.js'] },
  '@sveltejs/adapter-node': { argv: ['build-node/index.js'] },
  // The WORKERS comparison: server and wrk on every core (`cpus`), so a second worker can run.
  '@tachyon/sveltekit, unpinned': { argv: ['build-tachyon/index.js'], cpus: '0,1' },
  '@tachyon/sveltekit WORKERS=2, unpinned': { argv: ['build-tachyon/index.js'], env: { WORKERS: '2' }, cpus: '0,1' },
};
let nextPort = 4300 + Math.floor(Math.random() * 500);

function waitPort(port, child, ms = 15_000) {
  const until = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      if (child.exitCode !== null) return reject(new Error(`server exited (${child.exitCode})`));
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve();
      });
      s.once('error', () => {
        s.destroy();
        if (Date.now() > until) reject(new Error(`port ${port} never opened`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

async function start(name) {
  const spec = SERVERS[name];
  const port = nextPort++;
  const child = spawn('taskset', ['-c', spec.cpus ?? '0', NODE, ...spec.argv], {
    cwd: APP,
    env: { ...process.env, ...spec.env, PORT: String(port), HOST: '127.0.0.1', BENCH_HTML: HTML_FILE, NODE_ENV: 'production' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitPort(port, child);
  // A cluster's acceptor listens before its workers serve, answering 503 until then.
  for (const until = Date.now() + 30_000; spec.env?.WORKERS && (await fetch(`http://127.0.0.1:${port}/`)).status === 503; ) {
    if (Date.now() > until) throw new Error(`${name}: still 503 after 30 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    port,
    async stop() {
      child.kill('SIGKILL');
      if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
    },
  };
}

function wrk(port, urlPath, seconds, headers, cpus = '1') {
  const args = [
    '-c',
    cpus,
    'wrk',
    '-t1',
    `-c${CONNECTIONS}`,
    `-d${seconds}s`,
    ...headers.flatMap((h) => ['-H', h]),
    `http://127.0.0.1:${port}${urlPath}`,
  ];
  const out = sh('taskset', args, APP);
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
  const errors = /Non-2xx or 3xx responses: (\d+)|Socket errors: (.*)/.exec(out);
  if (!rps) throw new Error(`wrk output not understood:\n${out}`);
  return { rps: Number(rps[1]), errors: errors ? errors[0] : '' };
}

// The SSR page's bytes, as @tachyon/sveltekit renders them, for the raw and layer servers.
{
  const s = await start('@tachyon/sveltekit');
  const res = await fetch(`http://127.0.0.1:${s.port}/`);
  writeFileSync(HTML_FILE, Buffer.from(await res.arrayBuffer()));
  await s.stop();
}

const ALL_SCENARIOS = [
  { name: 'ssr', path: '/', headers: [], servers: Object.keys(SERVERS) },
  // Every request runs SvelteKit (dedup off where there is dedup: @tachyon/sveltekit, svelte-adapter-uws).
  {
    name: 'ssr-no-dedup',
    path: '/',
    headers: ['x-no-dedup: 1'],
    servers: ['uws (raw)', '@tachyon/sveltekit', 'svelte-adapter-uws', '@sveltejs/adapter-node'],
  },
  // A +server.ts GET returning 'hello world': the adapter's own cost, almost no SvelteKit work.
  {
    name: 'endpoint',
    path: '/hello',
    headers: ['x-no-dedup: 1'],
    servers: ['uws (raw)', '@tachyon/sveltekit', 'svelte-adapter-uws', '@sveltejs/adapter-node'],
  },
  {
    name: 'static-4k',
    path: '/asset-4k.css',
    headers: [],
    servers: ['uws (raw)', '@tachyon/sveltekit', 'svelte-adapter-uws', '@sveltejs/adapter-node'],
  },
  // WORKERS=2 against one process on the same asset. Both unpinned, wrk too: on 2 cores the
  // generator takes a core's worth from the workers, so the ratio understates a larger machine.
  {
    name: 'static-4k-workers',
    path: '/asset-4k.css',
    headers: [],
    servers: ['@tachyon/sveltekit, unpinned', '@tachyon/sveltekit WORKERS=2, unpinned'],
    wrkCpus: '0,1',
    ratioTo: '@tachyon/sveltekit, unpinned',
  },
];
const wanted = opts.scenarios?.split(',');
const unknown = wanted?.filter((n) => !ALL_SCENARIOS.some((sc) => sc.name === n)) ?? [];
if (unknown.length) throw new Error(`unknown scenario(s) ${unknown.join(', ')}: ${ALL_SCENARIOS.map((sc) => sc.name).join(', ')}`);
const SCENARIOS = wanted ? ALL_SCENARIOS.filter((sc) => wanted.includes(sc.name)) : ALL_SCENARIOS;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const results = {};
for (const sc of SCENARIOS) {
  results[sc.name] = Object.fromEntries(sc.servers.map((n) => [n, []]));
  for (let run = 0; run < RUNS; run++) {
    for (const name of sc.servers) {
      const s = await start(name);
      try {
        if (WARMUP > 0) wrk(s.port, sc.path, WARMUP, sc.headers, sc.wrkCpus);
        const r = wrk(s.port, sc.path, DURATION, sc.headers, sc.wrkCpus);
        if (r.errors) console.log(`  ${sc.name} ${name}: ${r.errors}`);
        results[sc.name][name].push(r.rps);
        console.log(`  ${sc.name} run ${run + 1} ${name}: ${Math.round(r.rps).toLocaleString('en-US')} req/s`);
      } finally {
        await s.stop();
      }
    }
  }
}

// --- report ------------------------------------------------------------------------------
const lines = [];
const fmt = (n) => Math.round(n).toLocaleString('en-US');
for (const sc of SCENARIOS) {
  const med = Object.fromEntries(Object.entries(results[sc.name]).map(([n, xs]) => [n, median(xs)]));
  const raw = med['uws (raw)'];
  const node = med['@sveltejs/adapter-node'];
  lines.push(
    `\n${sc.name} (${sc.path}${sc.headers.length ? ', ' + sc.headers.join(', ') : ''}), median of ${RUNS} x ${DURATION} s, ${CONNECTIONS} connections`,
  );
  if (sc.ratioTo !== undefined) {
    lines.push('| server | req/s | vs one process |', '|---|---:|---:|');
    for (const [n, v] of Object.entries(med)) lines.push(`| ${n} | ${fmt(v)} | ${(v / med[sc.ratioTo]).toFixed(2)}x |`);
    continue;
  }
  lines.push('| server | req/s | vs raw uWS | vs adapter-node |', '|---|---:|---:|---:|');
  for (const [n, v] of Object.entries(med)) {
    // 0: wrk's parser refused every response (svelte-adapter-uws 0.3.4 on uWS 20.57 sends
    // Content-Length twice, its own and uWS's), so there is nothing to report.
    if (v === 0) lines.push(`| ${n} | n/a: wrk rejected the responses | | |`);
    else lines.push(`| ${n} | ${fmt(v)} | ${((v / raw) * 100).toFixed(0)}% | ${(v / node).toFixed(2)}x |`);
  }
}
const out = lines.join('\n');
console.log(out);
mkdirSync(path.join(BENCH_DIR, 'results'), { recursive: true });
const file = path.join(BENCH_DIR, 'results', `sveltekit-${new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19)}Z.json`);
writeFileSync(
  file,
  JSON.stringify(
    {
      date: new Date().toISOString(),
      node: process.version,
      runs: RUNS,
      duration: DURATION,
      connections: CONNECTIONS,
      versions: versions(),
      results,
    },
    null,
    2,
  ) + '\n',
);
console.log(`\nraw runs: ${path.relative(REPO, file)}`);

function versions() {
  const v = (p) => JSON.parse(readFileSync(path.join(APP, 'node_modules', p, 'package.json'), 'utf8')).version;
  return Object.fromEntries(
    ['@sveltejs/kit', '@sveltejs/adapter-node', 'svelte-adapter-uws', 'svelte', 'vite', 'uWebSockets.js'].map((p) => [p, v(p)]),
  );
}
