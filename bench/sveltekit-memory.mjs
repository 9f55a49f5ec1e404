#!/usr/bin/env node
// Memory of `node build` (@tachyon/sveltekit) holding 200 MB of static assets (issue 26):
// the bench app (bench/sveltekit/app, built with the adapter) copied to build-memory/ with
// generated files added to build/client: a few over 1 MiB (streamed from disk, not held) and
// many small ones (held in memory with their build-time .br/.gz variants). Every file is
// then requested (compressed where a variant exists), plus ranges and the large files'
// variants, and the server's memory is read after gc() in every thread. The same without the
// added files gives the baseline; both with one process and with WORKERS=2.
//
//   node bench/sveltekit-memory.mjs                 # 200 MB, one process and WORKERS=2
//   node bench/sveltekit-memory.mjs --mb 50 --no-build
//
// Run it through `heavy`/`benchlock` (it reads and compresses ~200 MB once). RSS is the
// process's (worker threads share it); heap and external memory are per thread.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const APP = path.join(BENCH_DIR, 'sveltekit', 'app');
const BUILD = path.join(APP, 'build-tachyon');
const OUT = path.join(APP, 'build-memory'); // build-*/ is ignored by git
const NODE = process.execPath;
const MiB = 1024 * 1024;

const { values: opts } = parseArgs({
  options: { mb: { type: 'string', default: '200' }, 'no-build': { type: 'boolean', default: false } },
});
const TOTAL = Number(opts.mb) * 1e6;
if (!(TOTAL > 0)) throw new Error('--mb must be a positive number');

if (!existsSync(path.join(APP, 'node_modules', '.package-lock.json'))) {
  console.log('installing bench/sveltekit/app (npm ci, once)');
  run('npm', ['ci', '--no-audit', '--no-fund'], APP);
}
if (!opts['no-build'] || !existsSync(path.join(BUILD, 'index.js'))) {
  console.log('building the bench app with @tachyon/sveltekit');
  run(NODE, [path.join(APP, 'node_modules', 'vite', 'bin', 'vite.js'), 'build'], APP, { BENCH_ADAPTER: 'tachyon' });
}

function run(cmd, args, cwd, env = {}) {
  const r = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed:\n${r.stdout}\n${r.stderr}`);
}

// --- the assets --------------------------------------------------------------------------
/** Text that compresses like minified code (about 3-4x): words from a random vocabulary. */
const WORDS = Array.from({ length: 800 }, () => randomBytes(3 + (randomBytes(1)[0] % 6)).toString('base64url'));
function text(size) {
  const parts = [];
  let n = 0;
  for (let i = 0; n < size; i++) {
    const w = i % 12 === 0 ? `;\nexport const v${i}=` : WORDS[(Math.random() * WORDS.length) | 0] + (i % 3 ? '.' : '(');
    parts.push(w);
    n += w.length;
  }
  return Buffer.from(parts.join('')).subarray(0, size);
}

/** Writes `bytes` at `file` with .br/.gz where they are smaller (what the adapter's precompress does). */
function put(file, bytes, compressible) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, bytes);
  if (!compressible) return;
  const br = brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } });
  const gz = gzipSync(bytes, { level: 6 });
  if (br.length < bytes.length) writeFileSync(file + '.br', br);
  if (gz.length < bytes.length) writeFileSync(file + '.gz', gz);
}

/** The files added to build/client: [URL path, size, compressible]. */
function makeAssets(client) {
  const files = [];
  const add = (rel, size, compressible) => {
    put(path.join(client, rel), compressible ? text(size) : randomBytes(size), compressible);
    files.push({ url: '/' + rel, size, compressible });
  };
  // Large: streamed from disk per request (over 1 MiB), with variants for the text ones.
  for (let i = 0; i < 3; i++) add(`media/clip-${i}.mp4`, 16 * MiB, false);
  for (let i = 0; i < 2; i++) add(`data/catalog-${i}.json`, 8 * MiB, true);
  // Small: held in memory. Sizes cycle from 2 KiB to 256 KiB; 3 of 5 are text.
  const SIZES = [2, 6, 12, 24, 40, 64, 96, 128, 192, 256].map((k) => k * 1024);
  let used = files.reduce((s, f) => s + f.size, 0);
  for (let i = 0; used < TOTAL; i++) {
    const size = SIZES[i % SIZES.length];
    const kind = i % 5;
    const rel =
      kind < 3 ? `_app/immutable/assets/chunk-${i}.${kind === 2 ? 'css' : 'js'}` : `img/photo-${i}.${kind === 3 ? 'png' : 'webp'}`;
    add(rel, size, kind < 3);
    used += size;
  }
  return files;
}

// --- the server --------------------------------------------------------------------------
// Preloaded in every thread (workers inherit --import): on SIGUSR2 the primary asks every
// thread over a BroadcastChannel to gc() and report, then prints one MEMORY line. Workers hear
// each other's reports too: they answer only the primary's question.
const PRELOAD = `
import { isMainThread, threadId } from 'node:worker_threads';
const ch = new BroadcastChannel('bench-memory');
ch.unref();
const mine = () => { globalThis.gc(); globalThis.gc(); const m = process.memoryUsage(); return { thread: threadId, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers }; };
if (isMainThread) {
  const got = [];
  ch.onmessage = (e) => typeof e.data === 'object' && got.push(e.data);
  process.on('SIGUSR2', () => {
    got.length = 0;
    ch.postMessage('report');
    setTimeout(() => { const me = mine(); console.log('MEMORY ' + JSON.stringify({ rss: process.memoryUsage().rss, threads: [me, ...got] })); }, 1500);
  });
} else ch.onmessage = (e) => e.data === 'report' && ch.postMessage(mine());
`;

async function start(dir, workers) {
  writeFileSync(path.join(dir, 'gc-preload.mjs'), PRELOAD);
  const env = { ...process.env, PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'production', WORKERS: workers };
  if (!workers) delete env.WORKERS;
  const child = spawn(NODE, ['--expose-gc', '--import', './gc-preload.mjs', 'index.js'], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const lines = [];
  child.stdout.on('data', (d) => {
    out += d;
    for (let i; (i = out.indexOf('\n')) >= 0; out = out.slice(i + 1)) lines.push(out.slice(0, i));
  });
  const waitLine = async (re, ms) => {
    for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
      const i = lines.findIndex((l) => re.test(l));
      if (i >= 0) return lines.splice(i, 1)[0];
      if (child.exitCode !== null) break;
    }
    throw new Error(`server: no line ${re} in ${ms} ms:\n${lines.join('\n')}`);
  };
  const t0 = Date.now();
  const port = Number(/:(\d+)/.exec(await waitLine(/Listening on/, 120_000))[1]);
  const startup = Date.now() - t0;
  return {
    port,
    startup,
    async memory() {
      child.kill('SIGUSR2');
      return JSON.parse((await waitLine(/^MEMORY /, 10_000)).slice(7));
    },
    async stop() {
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
    },
  };
}

// --- the load ----------------------------------------------------------------------------
const agent = new Agent({ keepAlive: true, maxSockets: 8 });
function get(port, url, headers) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: url, headers, agent }, (res) => {
      let n = 0;
      res.on('data', (c) => (n += c.length));
      res.on('end', () => resolve({ status: res.statusCode, encoding: res.headers['content-encoding'], length: n }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Requests every file (compressed where it has variants), ranges of some, the large files' variants; checks each answer. */
async function serveAll(port, files) {
  const asks = [];
  for (const [i, f] of files.entries()) {
    const big = f.size > MiB;
    asks.push([f, f.compressible ? { 'accept-encoding': 'br, gzip' } : {}, 200, f.compressible ? 'br' : undefined]);
    if (big && f.compressible) asks.push([f, { 'accept-encoding': 'gzip' }, 200, 'gzip']);
    if (big || i % 10 === 0) asks.push([f, { range: 'bytes=1000-1999' }, 206, undefined]);
  }
  let bytes = 0;
  for (let next = 0; next < asks.length; ) {
    const batch = asks.slice(next, (next += 8));
    const answers = await Promise.all(batch.map(([f, h]) => get(port, f.url, h)));
    for (const [j, a] of answers.entries()) {
      const [f, h, status, encoding] = batch[j];
      const length = status === 206 ? 1000 : encoding ? undefined : f.size;
      if (a.status !== status || a.encoding !== encoding || (length !== undefined && a.length !== length))
        throw new Error(
          `${f.url} ${JSON.stringify(h)}: got ${JSON.stringify(a)}, wanted ${status} ${encoding ?? 'identity'} ${length ?? ''}`,
        );
      bytes += a.length;
    }
  }
  return { requests: asks.length, bytes };
}

// --- the runs ----------------------------------------------------------------------------
const mb = (n) => (n / 1e6).toFixed(0);
rmSync(OUT, { recursive: true, force: true });
const BASE = path.join(OUT, 'base');
const FULL = path.join(OUT, 'assets');
cpSync(BUILD, BASE, { recursive: true });
cpSync(BUILD, FULL, { recursive: true });
console.log(`generating ${mb(TOTAL)} MB of assets`);
const files = makeAssets(path.join(FULL, 'client'));
const original = files.reduce((s, f) => s + f.size, 0);
const onDisk = (f, ext) => (existsSync(path.join(FULL, 'client', f.url + ext)) ? statSync(path.join(FULL, 'client', f.url + ext)).size : 0);
const small = files.filter((f) => f.size <= MiB);
const held = small.reduce((s, f) => s + f.size + onDisk(f, '.br') + onDisk(f, '.gz'), 0);
console.log(
  `${files.length} files, ${mb(original)} MB (${files.length - small.length} over 1 MiB: ${mb(original - small.reduce((s, f) => s + f.size, 0))} MB, streamed); ` +
    `the ${small.length} small ones with their variants: ${mb(held)} MB`,
);

const rows = [];
for (const workers of ['', '2']) {
  const label = workers ? `WORKERS=${workers}` : 'one process';
  const base = await start(BASE, workers);
  const idle = await base.memory();
  await base.stop();
  const s = await start(FULL, workers);
  const loaded = await s.memory();
  const load = await serveAll(s.port, files);
  const served = await s.memory();
  await s.stop();
  const threads = (m) => m.threads.map((t) => `${t.thread}: heap ${mb(t.heapUsed)} / external ${mb(t.external)} MB`).join(', ');
  console.log(`${label}: startup ${s.startup} ms, ${load.requests} requests, ${mb(load.bytes)} MB served`);
  console.log(
    `  no assets: rss ${mb(idle.rss)} MB; with assets, started: rss ${mb(loaded.rss)} MB; after serving all: rss ${mb(served.rss)} MB`,
  );
  console.log(`  threads after serving (id: heap / external): ${threads(served)}`);
  rows.push({ label, idle: idle.rss, loaded: loaded.rss, served: served.rss, threads: served.threads, ...load, startup: s.startup });
}
console.log(
  `\n| ${mb(original)} MB of assets (${mb(held)} MB held with variants) | RSS, no assets | RSS, started | RSS, after serving all | added |`,
);
console.log('|---|---:|---:|---:|---:|');
for (const r of rows)
  console.log(`| ${r.label} | ${mb(r.idle)} MB | ${mb(r.loaded)} MB | ${mb(r.served)} MB | +${mb(r.served - r.idle)} MB |`);
rmSync(OUT, { recursive: true, force: true });
agent.destroy();
