#!/usr/bin/env node
// Quick HTTP micro-benchmark: raw uWebSockets.js vs Tachyon vs Express 5 (and sirv for
// the static-file scenarios).
//
//   npm run bench:quick                      # 3 runs x 5 s per (scenario, server)
//   npm run bench:quick -- --smoke           # CI check: 1 run x 1 s, well under a minute
//   node bench/quick.mjs --runs 5 --duration 10 --only realistic --peers tachyon,express
//
// Method (see bench/README.md): each measured run starts a fresh server process
// pinned to CPU 0 and a single-threaded wrk pinned to CPU 1; a warm-up run is
// discarded; peers are interleaved run by run; the median is reported; ratios
// only compare figures measured in the same invocation; server CPU time per
// request comes from /proc/<pid>/stat; a run where wrk itself was >= 95% busy
// is flagged generator-bound.

import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createStaticFixtures, STATIC_FILES } from './static-fixtures.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));

// Always measure on the repository's pinned Node (the `node` devDependency): peers differ
// by up to 4x between Node majors (Express on Node 20 vs 24), so a stray system Node would
// make the figures meaningless. Re-run ourselves with it when started with another one.
{
  const pinned = path.join(BENCH_DIR, '..', 'node_modules', 'node', 'bin', 'node');
  const pinnedVersion = existsSync(pinned) ? JSON.parse(readFileSync(path.join(BENCH_DIR, '..', 'node_modules', 'node', 'package.json'), 'utf8')).version : null;
  if (pinnedVersion && process.versions.node !== pinnedVersion) {
    console.log(`(re-running with the pinned Node ${pinnedVersion}; this is ${process.version})`);
    const r = spawnSync(pinned, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
    process.exit(r.status ?? 1);
  }
}
const REPO_DIR = path.resolve(BENCH_DIR, '..');
const SERVERS_DIR = path.join(BENCH_DIR, 'servers');
const RESULTS_DIR = path.join(BENCH_DIR, 'results');

const DYNAMIC_PEERS = ['uws', 'tachyon', 'express'];
const STATIC_PEERS = ['uws', 'tachyon', 'sirv'];
/** Each scenario lists the peers that implement it; the others are skipped for it. */
const SCENARIOS = {
  hello: { path: '/', peers: DYNAMIC_PEERS },
  middleware: { path: '/mw', peers: DYNAMIC_PEERS },
  realistic: { path: '/users/42?fields=a,b', peers: DYNAMIC_PEERS },
  'static-4k': { path: '/static/file-4k.txt', peers: STATIC_PEERS, file: 'file-4k.txt' },
  'static-64k': { path: '/static/file-64k.txt', peers: STATIC_PEERS, file: 'file-64k.txt' },
};
const PEERS = ['uws', 'tachyon', 'express', 'sirv'];

const SERVER_CPU = 0; // taskset -c for the server under test
const LOAD_CPU = 1; // taskset -c for wrk
const WRK_THREADS = 1;
const WRK_CONNECTIONS = 100;
const GENERATOR_BOUND = 0.95; // wrk CPU / wall at or above this: the generator, not the server, is the limit
const CONTENDED = 0.05; // other processes + steal on either pinned core at or above this: a noisy run
const READY_TIMEOUT_MS = 15_000;

// ---------------------------------------------------------------- options

const USAGE = `Usage: node bench/quick.mjs [options]

  --runs N          measured runs per (scenario, server), interleaved; default 3
  --duration S      seconds per measured run (whole seconds, wrk's unit); default 5
  --warmup S        seconds of discarded warm-up load per run; default 2
  --only LIST       scenarios, comma-separated: ${Object.keys(SCENARIOS).join(',')}
  --peers LIST      servers, comma-separated: ${PEERS.join(',')}
                    (express: hello, middleware, realistic only; sirv: static-* only)
  --smoke           1 run, 1 s, 0.5 s warm-up: checks the harness works (CI)
  -h, --help        this text`;

function fail(message) {
  console.error(`\nbench: ${message}`);
  process.exit(1);
}

function parseOptions() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        runs: { type: 'string' },
        duration: { type: 'string' },
        warmup: { type: 'string' },
        only: { type: 'string' },
        peers: { type: 'string' },
        smoke: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    }));
  } catch (err) {
    fail(`${err.message}\n\n${USAGE}`);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const list = (value, allowed, what) => {
    if (value === undefined) return allowed;
    const items = value.split(',').map((s) => s.trim()).filter(Boolean);
    const bad = items.filter((s) => !allowed.includes(s));
    if (bad.length || !items.length) fail(`unknown ${what}: ${bad.join(', ') || '(empty)'}; expected some of ${allowed.join(',')}`);
    // Keep the canonical order (uws, tachyon, express, sirv) whatever order was typed.
    return allowed.filter((s) => items.includes(s));
  };
  const int = (value, name, dflt) => {
    if (value === undefined) return dflt;
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) fail(`--${name} must be a positive whole number, got ${value}`);
    return n;
  };
  const seconds = (value, name, dflt) => {
    if (value === undefined) return dflt;
    const n = Number(value);
    if (!Number.isFinite(n) || n < 0) fail(`--${name} must be a number of seconds >= 0, got ${value}`);
    return n;
  };
  const smoke = values.smoke;
  const opts = {
    smoke,
    runs: smoke ? 1 : int(values.runs, 'runs', 3),
    duration: smoke ? 1 : int(values.duration, 'duration', 5),
    warmup: smoke ? 0.5 : seconds(values.warmup, 'warmup', 2),
    scenarios: list(values.only, Object.keys(SCENARIOS), 'scenario'),
    peers: list(values.peers, PEERS, 'peer'),
  };
  const empty = opts.scenarios.filter((s) => peersFor(s, opts).length === 0);
  if (empty.length) fail(`no selected server implements ${empty.join(', ')} (${empty.map((s) => `${s}: ${SCENARIOS[s].peers.join(',')}`).join('; ')})`);
  return opts;
}

/** The selected peers that implement `scenario`, in canonical order. */
function peersFor(scenario, opts) {
  return opts.peers.filter((p) => SCENARIOS[scenario].peers.includes(p));
}

// ---------------------------------------------------------- child processes

/** Every process we started and have not yet seen exit: killed on any way out. */
const live = new Set();

function killGroup(child, signal) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    // Children are spawned detached, so each leads its own process group
    // (taskset execs into its command, so the pid is the server's / bash's).
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      /* already gone */
    }
  }
}

function track(child) {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

function killAll() {
  for (const child of live) killGroup(child, 'SIGKILL');
  live.clear();
}

let interrupted = false;
process.on('exit', killAll);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\nbench: ${sig}, stopping servers and load generator`);
    killAll();
    process.exit(sig === 'SIGINT' ? 130 : 143);
  });
}

function waitExit(child, ms) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

async function stopServer(server) {
  killGroup(server.child, 'SIGTERM');
  if (!(await waitExit(server.child, 2000))) {
    killGroup(server.child, 'SIGKILL');
    await waitExit(server.child, 2000);
  }
}

// ------------------------------------------------------------------ servers

/** Starts a fresh server process pinned to SERVER_CPU; resolves once it printed READY <port>. */
function startServer(peer, env) {
  const script = path.join(SERVERS_DIR, `${peer}.mjs`);
  const cmd = env.pin ? 'taskset' : process.execPath;
  const args = env.pin ? ['-c', String(SERVER_CPU), process.execPath, script] : [script];
  const child = track(
    spawn(cmd, args, {
      cwd: BENCH_DIR,
      env: { ...process.env, PORT: '0', BENCH_HARNESS: '1', NODE_ENV: 'production', STATIC_DIR: env.staticDir },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    }),
  );
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => {
    if (stderr.length < 20_000) stderr += d;
  });
  child.stdin.on('error', () => {});
  let settled = false;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      killGroup(child, 'SIGKILL');
      reject(new Error(`${peer} server printed no READY line within ${READY_TIMEOUT_MS / 1000} s.\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, READY_TIMEOUT_MS);
    const onExit = (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${peer} server exited (${signal ?? `code ${code}`}) before it was ready.\nstdout: ${stdout}\nstderr: ${stderr}`));
    };
    child.once('exit', onExit);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`could not start ${peer} server: ${err.message}`));
    });
    child.stdout.setEncoding('utf8').on('data', (d) => {
      if (stdout.length < 20_000) stdout += d;
      const m = /^READY (\d+)\s*$/m.exec(stdout);
      if (m && !settled) {
        settled = true;
        clearTimeout(timer);
        child.off('exit', onExit);
        const server = { peer, child, pid: child.pid, port: Number(m[1]), stderr: () => stderr };
        child.once('exit', (code, signal) => {
          if (!server.stopping) server.died = `${signal ?? `code ${code}`}`;
        });
        resolve(server);
      }
    });
  });
}

/** One request with its own connection (so no idle keep-alive socket lingers during the measurement). */
function request(port, urlPath) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, agent: false, timeout: 5000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        resolve({ status: res.statusCode, headers: res.headers, raw, body: raw.toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timed out after 5 s')));
    req.on('error', reject);
  });
}

/**
 * Checks one scenario's answer; returns { error } on failure. The realistic body is returned
 * for cross-peer comparison. Static answers are compared byte for byte with the fixture file
 * itself (so every peer serves the same bytes).
 */
async function checkScenario(server, scenario, env) {
  const urlPath = SCENARIOS[scenario].path;
  let res;
  try {
    res = await request(server.port, urlPath);
  } catch (err) {
    return { error: `${server.peer} GET ${urlPath}: ${err.message}` };
  }
  if (res.status !== 200) return { error: `${server.peer} GET ${urlPath}: status ${res.status}, expected 200 (body: ${res.body.slice(0, 200)})` };
  const file = SCENARIOS[scenario].file;
  if (file !== undefined) {
    const expected = env.staticFiles[file];
    if (res.raw.length !== STATIC_FILES[file]) return { error: `${server.peer} GET ${urlPath}: body of ${res.raw.length} bytes, expected exactly ${STATIC_FILES[file]}` };
    if (!res.raw.equals(expected)) return { error: `${server.peer} GET ${urlPath}: body differs from the fixture file (same length, different bytes)` };
    if (!res.headers.etag) return { error: `${server.peer} GET ${urlPath}: no ETag header` };
    if (res.headers['content-encoding'] && res.headers['content-encoding'] !== 'identity') return { error: `${server.peer} GET ${urlPath}: content-encoding ${res.headers['content-encoding']} without Accept-Encoding` };
    return { headers: res.headers };
  }
  if (scenario === 'hello' && res.body !== '') return { error: `${server.peer} GET ${urlPath}: expected an empty body, got ${JSON.stringify(res.body.slice(0, 100))}` };
  if (scenario !== 'hello' && res.headers['x-mw'] !== '1') return { error: `${server.peer} GET ${urlPath}: the middleware did not run (no "x-mw: 1" header)` };
  if (scenario === 'realistic') {
    let json;
    try {
      json = JSON.parse(res.body);
    } catch {
      return { error: `${server.peer} GET ${urlPath}: body is not JSON: ${res.body.slice(0, 200)}` };
    }
    if (json?.id !== 42) return { error: `${server.peer} GET ${urlPath}: expected "id": 42 in the JSON, got ${JSON.stringify(json?.id)}` };
    if (!String(res.headers['content-type']).startsWith('application/json')) {
      return { error: `${server.peer} GET ${urlPath}: content-type ${res.headers['content-type']}, expected application/json` };
    }
    return { body: res.body };
  }
  return {};
}

/**
 * Full correctness pass on one fresh process per peer, before anything is measured. Each
 * peer needed by the selected scenarios is checked on every scenario it implements.
 */
async function verifyPeers(opts, env) {
  const bodies = {};
  const staticHeaders = {};
  const needed = opts.peers.filter((p) => opts.scenarios.some((s) => SCENARIOS[s].peers.includes(p)));
  for (const peer of needed) {
    const server = await startServer(peer, env);
    try {
      const problems = [];
      const checked = [];
      for (const scenario of Object.keys(SCENARIOS)) {
        if (!SCENARIOS[scenario].peers.includes(peer)) continue;
        const r = await checkScenario(server, scenario, env);
        checked.push(SCENARIOS[scenario].path.replace(/\?.*/, ''));
        if (r.error) problems.push(r.error);
        if (r.body) bodies[peer] = r.body;
        if (r.headers && scenario === 'static-4k') staticHeaders[peer] = r.headers;
      }
      // Validation must really run: an invalid id is a 400, not a 200.
      if (SCENARIOS.realistic.peers.includes(peer)) {
        try {
          const bad = await request(server.port, '/users/abc?fields=a,b');
          if (bad.status !== 400) problems.push(`${peer} GET /users/abc: status ${bad.status}, expected 400 (is params validation wired?)`);
          else checked.push('/users/abc -> 400');
        } catch (err) {
          problems.push(`${peer} GET /users/abc: ${err.message}`);
        }
      }
      if (problems.length) throw new Error(`correctness check failed:\n  ${problems.join('\n  ')}`);
      console.log(`  ok  ${peer.padEnd(8)} pid ${server.pid}, port ${server.port}: ${checked.join(', ')}`);
    } finally {
      server.stopping = true;
      await stopServer(server);
    }
  }
  const distinct = new Set(Object.values(bodies));
  if (distinct.size > 1) {
    const lines = Object.entries(bodies).map(([p, b]) => `  ${p}: ${b}`);
    throw new Error(`the realistic scenario's JSON differs between servers (it must be identical):\n${lines.join('\n')}`);
  }
  // Static response headers (other than Date), for the record: peers differ here by design.
  const skip = new Set(['date', 'connection', 'keep-alive']);
  return Object.fromEntries(Object.entries(staticHeaders).map(([p, h]) => [p, Object.fromEntries(Object.entries(h).filter(([k]) => !skip.has(k)))]));
}

// ------------------------------------------------------------- measurement

/** utime + stime of a whole process (all threads), in clock ticks. */
function cpuTicks(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields[0] is field 3 (state)
  return Number(fields[14 - 3]) + Number(fields[15 - 3]);
}

/** One CPU's counters from /proc/stat, in clock ticks: tasks (user+nice+system), irq (irq+softirq), steal, all. */
function cpuStat(cpu) {
  const line = readFileSync('/proc/stat', 'utf8').split('\n').find((l) => l.startsWith(`cpu${cpu} `));
  if (!line) return undefined;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return { tasks: user + nice + system, irq: irq + softirq, steal: steal ?? 0, all: user + nice + system + idle + iowait + irq + softirq + (steal ?? 0) };
}

function cpuDelta(a, b) {
  if (!a || !b) return undefined;
  return { tasks: b.tasks - a.tasks, irq: b.irq - a.irq, steal: b.steal - a.steal, all: b.all - a.all };
}

function toMs(value, unit) {
  const n = Number(value);
  switch (unit) {
    case 'us':
      return n / 1000;
    case 'ms':
      return n;
    case 's':
      return n * 1000;
    case 'm':
      return n * 60_000;
    case 'h':
      return n * 3_600_000;
    default:
      return NaN;
  }
}

function parseWrk(text) {
  const num = (re) => {
    const m = re.exec(text);
    return m ? Number(m[1]) : undefined;
  };
  const latency = {};
  for (const m of text.matchAll(/^\s*(50|75|90|99)%\s+([\d.]+)(us|ms|s|m|h)\s*$/gm)) latency[`p${m[1]}`] = toMs(m[2], m[3]);
  const avg = /^\s*Latency\s+([\d.]+)(us|ms|s|m|h)/m.exec(text);
  if (avg) latency.avg = toMs(avg[1], avg[2]);
  const done = /^\s*(\d+) requests in ([\d.]+)(us|ms|s|m|h)/m.exec(text);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  return {
    reqPerSec: num(/^Requests\/sec:\s+([\d.]+)/m),
    requests: done ? Number(done[1]) : undefined,
    durationS: done ? toMs(done[2], done[3]) / 1000 : undefined,
    latencyMs: latency,
    non2xx: num(/Non-2xx or 3xx responses:\s+(\d+)/) ?? 0,
    socketErrors: sock ? { connect: +sock[1], read: +sock[2], write: +sock[3], timeout: +sock[4] } : { connect: 0, read: 0, write: 0, timeout: 0 },
  };
}

/**
 * Runs wrk pinned to LOAD_CPU under a bash wrapper whose `times` builtin then
 * reports wrk's own user+system CPU (children's times, once wrk was reaped).
 */
function runWrk(url, seconds, env) {
  const wrkArgs = [`-t${WRK_THREADS}`, `-c${WRK_CONNECTIONS}`, `-d${seconds}s`, '--latency', url];
  const script = 'wrk "$@"; rc=$?; echo "__WRK_TIMES__"; times; exit $rc';
  const cmd = env.pin ? 'taskset' : 'bash';
  const args = [...(env.pin ? ['-c', String(env.loadCpu), 'bash'] : []), '-c', script, 'wrk', ...wrkArgs];
  const child = track(spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true }));
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    child.once('error', (e) => reject(new Error(`could not run wrk: ${e.message}`)));
    child.once('exit', (code, signal) => {
      const [wrkOut, timesOut = ''] = out.split('__WRK_TIMES__');
      if (code !== 0) {
        reject(new Error(`wrk failed (${signal ?? `exit ${code}`}): ${err.trim() || wrkOut.trim()}`));
        return;
      }
      // Second `times` line: CPU of the shell's children, i.e. wrk. Format: 0m1.234s 0m0.567s
      const lines = timesOut.trim().split('\n');
      const m = /(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/.exec(lines[lines.length - 1] ?? '');
      const wrkCpuS = m ? Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4]) : undefined;
      resolve({ text: wrkOut, wrkCpuS });
    });
  });
}

/**
 * Discarded warm-up load, same shape as the measurement. wrk only takes whole
 * seconds, so a fractional warm-up runs wrk for the next whole second and stops
 * it with SIGINT (wrk stops cleanly on it). taskset execs wrk: the pid is wrk's.
 */
function warmUp(url, seconds, env) {
  const wrkArgs = [`-t${WRK_THREADS}`, `-c${WRK_CONNECTIONS}`, `-d${Math.max(1, Math.ceil(seconds))}s`, url];
  const child = track(spawn(env.pin ? 'taskset' : 'wrk', [...(env.pin ? ['-c', String(env.loadCpu), 'wrk'] : []), ...wrkArgs], { stdio: ['ignore', 'ignore', 'pipe'], detached: true }));
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
  const timer = setTimeout(() => killGroup(child, 'SIGINT'), seconds * 1000);
  return new Promise((resolve, reject) => {
    child.once('error', (e) => reject(new Error(`could not run wrk: ${e.message}`)));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0 || signal === 'SIGINT') resolve();
      else reject(new Error(`wrk (warm-up) failed (${signal ?? `exit ${code}`}): ${err.trim()}`));
    });
  });
}

async function measureOnce(peer, scenario, runIndex, opts, env) {
  const urlPath = SCENARIOS[scenario].path;
  const server = await startServer(peer, env);
  try {
    const check = await checkScenario(server, scenario, env);
    if (check.error) throw new Error(`correctness check failed before measuring: ${check.error}`);
    const url = `http://127.0.0.1:${server.port}${urlPath}`;
    if (opts.warmup > 0) await warmUp(url, opts.warmup, env);
    if (server.died) throw new Error(`${peer} server died during warm-up (${server.died}): ${server.stderr()}`);

    const sys0 = [cpuStat(env.serverCpu ?? 0), cpuStat(env.loadCpu)];
    const cpu0 = cpuTicks(server.pid);
    const t0 = performance.now();
    const { text, wrkCpuS } = await runWrk(url, opts.duration, env);
    const wallS = (performance.now() - t0) / 1000;
    if (server.died) throw new Error(`${peer} server died during the measurement (${server.died}): ${server.stderr()}`);
    const cpu1 = cpuTicks(server.pid);
    const sys1 = [cpuStat(env.serverCpu ?? 0), cpuStat(env.loadCpu)];

    const wrk = parseWrk(text);
    if (!wrk.reqPerSec || !wrk.requests) throw new Error(`could not parse wrk's output:\n${text}`);
    const serverCpuUs = ((cpu1 - cpu0) * 1e6) / env.clkTck;
    const windowS = wrk.durationS ?? wallS;
    const wrkBusy = wrkCpuS !== undefined ? wrkCpuS / windowS : undefined;
    // Interference: CPU time on the two pinned cores that was neither the server nor
    // wrk (other processes), plus hypervisor steal. Fractions of the window.
    const [d0, d1] = [cpuDelta(sys0[0], sys1[0]), cpuDelta(sys0[1], sys1[1])];
    const frac = (ticks, d) => (d && d.all > 0 ? Math.max(0, ticks) / d.all : undefined);
    const interference = env.pin && env.cpus >= 2 ? {
      serverCpuOthers: frac(d0?.tasks - (cpu1 - cpu0), d0),
      serverCpuSteal: frac(d0?.steal, d0),
      serverCpuIrq: frac(d0?.irq, d0),
      loadCpuOthers: wrkCpuS !== undefined ? frac(d1?.tasks - wrkCpuS * env.clkTck, d1) : undefined,
      loadCpuSteal: frac(d1?.steal, d1),
    } : undefined;
    const serverCoreLost = interference ? (interference.serverCpuOthers ?? 0) + (interference.serverCpuSteal ?? 0) : 0;
    const loadCoreLost = interference ? (interference.loadCpuOthers ?? 0) + (interference.loadCpuSteal ?? 0) : 0;
    const contended = serverCoreLost >= CONTENDED || loadCoreLost >= CONTENDED;
    return {
      scenario,
      path: urlPath,
      server: peer,
      run: runIndex + 1,
      reqPerSec: wrk.reqPerSec,
      requests: wrk.requests,
      durationS: wrk.durationS,
      wallS,
      latencyMs: wrk.latencyMs,
      non2xx: wrk.non2xx,
      socketErrors: wrk.socketErrors,
      serverPid: server.pid,
      serverCpuTicks: cpu1 - cpu0,
      serverCpuUs,
      serverBusy: serverCpuUs / 1e6 / wallS,
      cpuUsPerReq: serverCpuUs / wrk.requests,
      wrkCpuS,
      wrkBusy,
      generatorBound: wrkBusy !== undefined && wrkBusy >= GENERATOR_BOUND,
      interference,
      serverCoreLost,
      loadCoreLost,
      contended,
      wrkOutput: text,
    };
  } finally {
    server.stopping = true;
    await stopServer(server);
  }
}

// ------------------------------------------------------------------ report

function median(xs) {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return undefined;
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

function summarize(results, opts) {
  const rows = [];
  for (const scenario of opts.scenarios) {
    const med = {};
    const peers = peersFor(scenario, opts);
    for (const peer of peers) med[peer] = median(results.filter((r) => r.scenario === scenario && r.server === peer).map((r) => r.reqPerSec));
    for (const peer of peers) {
      const runs = results.filter((r) => r.scenario === scenario && r.server === peer);
      rows.push({
        scenario,
        server: peer,
        runs: runs.length,
        medianReqPerSec: med[peer],
        minReqPerSec: Math.min(...runs.map((r) => r.reqPerSec)),
        maxReqPerSec: Math.max(...runs.map((r) => r.reqPerSec)),
        p50Ms: median(runs.map((r) => r.latencyMs.p50)),
        p99Ms: median(runs.map((r) => r.latencyMs.p99)),
        cpuUsPerReq: median(runs.map((r) => r.cpuUsPerReq)),
        serverBusy: median(runs.map((r) => r.serverBusy)),
        wrkBusy: median(runs.map((r) => r.wrkBusy)),
        vsUws: med.uws ? med[peer] / med.uws : undefined,
        vsExpress: med.express ? med[peer] / med.express : undefined,
        vsSirv: med.sirv ? med[peer] / med.sirv : undefined,
        generatorBoundRuns: runs.filter((r) => r.generatorBound).length,
        noisyRuns: runs.filter((r) => r.contended).length,
        erroredRuns: runs.filter((r) => r.non2xx > 0 || Object.values(r.socketErrors).some((n) => n > 0)).length,
      });
    }
  }
  return rows;
}

const fmtInt = (n) => (n === undefined ? '—' : Math.round(n).toLocaleString('en-US'));
const fmtMs = (n) => (n === undefined ? '—' : n < 1 ? `${(n * 1000).toFixed(0)} µs` : `${n.toFixed(2)} ms`);
const fmtX = (n) => (n === undefined ? '—' : `${n.toFixed(2)}×`);
const fmtPct = (n) => (n === undefined ? '?' : `${Math.floor(n * 100)}%`); // floor: 94.8% must not read as the 95% threshold

function printTable(rows) {
  const header = ['scenario', 'server', 'req/s (median)', 'p99', 'CPU µs/req', '× uWS', '× Express', '× sirv', 'flags'];
  const body = rows.map((r) => {
    const flags = [];
    if (r.generatorBoundRuns) flags.push(`generator-bound ${r.generatorBoundRuns}/${r.runs}`);
    if (r.noisyRuns) flags.push(`noisy ${r.noisyRuns}/${r.runs}`);
    if (r.erroredRuns) flags.push(`ERRORS ${r.erroredRuns}/${r.runs}`);
    return [r.scenario, r.server, fmtInt(r.medianReqPerSec), fmtMs(r.p99Ms), r.cpuUsPerReq?.toFixed(1) ?? '—', fmtX(r.vsUws), fmtX(r.vsExpress), fmtX(r.vsSirv), flags.join(', ')];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const right = new Set([2, 3, 4, 5, 6, 7]);
  const line = (cells) => `| ${cells.map((c, i) => (right.has(i) ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w, i) => (right.has(i) ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`);
  for (const row of body) console.log(line(row));
}

// ------------------------------------------------------------- environment

function which(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).status === 0;
}

function ensureWrk() {
  if (which('wrk')) return;
  console.log('bench: wrk not found; installing it with `apt-get install -y wrk`');
  if (!which('apt-get')) fail('wrk is not installed and apt-get is not available: install wrk (https://github.com/wg/wrk) and retry');
  const sudo = process.getuid?.() !== 0 && which('sudo') ? ['sudo'] : [];
  const apt = (...args) => spawnSync(sudo[0] ?? 'apt-get', [...(sudo.length ? ['apt-get'] : []), ...args], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } }).status === 0;
  if (!apt('install', '-y', 'wrk')) {
    console.log('bench: apt-get install failed; running `apt-get update` and retrying');
    if (!apt('update') || !apt('install', '-y', 'wrk')) fail('could not install wrk with apt-get');
  }
  if (!which('wrk')) fail('wrk still not found after apt-get install');
  console.log('bench: wrk installed');
}

/** package.json version of a dependency, looked up the way Node would (nearest node_modules upwards). */
function pkgVersion(name) {
  for (let dir = SERVERS_DIR; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'node_modules', name, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8'));
      return pkg.name && pkg.name !== name ? `${pkg.version} (${pkg.name})` : pkg.version;
    }
    if (dir === path.dirname(dir)) return undefined;
  }
}

function sh(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

function environment() {
  const cpuinfo = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';
  const clkTck = Number(sh('getconf', ['CLK_TCK'])) || 100;
  const cpus = os.availableParallelism?.() ?? os.cpus().length;
  const pin = which('taskset');
  const commit = sh('git', ['-C', REPO_DIR, 'rev-parse', 'HEAD']);
  const dirty = commit ? Boolean(sh('git', ['-C', REPO_DIR, 'status', '--porcelain', '--', 'packages'])) : undefined;
  return {
    node: process.version,
    uWebSockets: pkgVersion('uWebSockets.js'),
    express: pkgVersion('express'),
    sirv: pkgVersion('sirv'),
    tachyon: pkgVersion('tachyon'),
    zod: pkgVersion('zod'),
    wrk: sh('sh', ['-c', 'wrk -v 2>&1 | head -1']),
    kernel: sh('uname', ['-r']),
    cpuModel: /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? os.cpus()[0]?.model,
    cpus,
    clkTck,
    pin,
    serverCpu: pin ? SERVER_CPU : null,
    loadCpu: pin ? (cpus >= 2 ? LOAD_CPU : SERVER_CPU) : null,
    git: commit ? { commit, packagesDirty: dirty } : undefined,
  };
}

// -------------------------------------------------------------------- main

async function main() {
  const opts = parseOptions();
  ensureWrk();
  if (!existsSync(path.join(REPO_DIR, 'packages', 'tachyon', 'dist', 'index.js')) && opts.peers.includes('tachyon')) {
    fail('packages/tachyon/dist is missing: run `npm run build` at the repo root first');
  }
  const env = environment();
  if (!env.pin) console.warn('bench: WARNING taskset not found: nothing is pinned, figures are much noisier');
  else if (env.cpus < 2) console.warn('bench: WARNING fewer than 2 CPUs: server and wrk share CPU 0, figures are not meaningful');
  env.loadCpu ??= LOAD_CPU;

  // The static fixtures are generated once per invocation into a temp dir, removed on exit.
  const fixtures = createStaticFixtures();
  process.on('exit', fixtures.remove);
  env.staticDir = fixtures.dir;
  env.staticFiles = fixtures.files;

  const startedAt = new Date();
  const perRun = opts.warmup + opts.duration + 0.7;
  const pairs = opts.scenarios.reduce((n, s) => n + peersFor(s, opts).length, 0);
  const estimate = Math.round(pairs * opts.runs * perRun + opts.peers.length);
  const used = opts.peers.filter((p) => opts.scenarios.some((s) => SCENARIOS[s].peers.includes(p)));
  console.log(`Tachyon quick bench${opts.smoke ? ' (smoke)' : ''}: ${opts.scenarios.join(', ')} x ${used.join(', ')}; ${opts.runs} run(s) x ${opts.duration} s after ${opts.warmup} s warm-up; wrk -t${WRK_THREADS} -c${WRK_CONNECTIONS}; ~${estimate} s`);
  console.log(`node ${env.node}, uWS ${env.uWebSockets}, express ${env.express}, sirv ${env.sirv}, kernel ${env.kernel}, ${env.cpuModel} (${env.cpus} CPUs); server on CPU ${env.serverCpu ?? '-'}, wrk on CPU ${env.pin ? env.loadCpu : '-'}; load avg ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}`);

  console.log('\nCorrectness check (one fresh process per server):');
  const staticHeaders = await verifyPeers(opts, env);

  console.log('\nMeasuring:');
  const results = [];
  const loadavgStart = os.loadavg();
  for (const scenario of opts.scenarios) {
    for (let i = 0; i < opts.runs; i++) {
      for (const peer of peersFor(scenario, opts)) {
        const r = await measureOnce(peer, scenario, i, opts, env);
        results.push(r);
        const flags = [r.generatorBound ? ' GENERATOR-BOUND' : '', r.contended ? ` NOISY (others+steal: CPU ${env.serverCpu} ${fmtPct(r.serverCoreLost)}, CPU ${env.loadCpu} ${fmtPct(r.loadCoreLost)})` : '', r.non2xx ? ` NON-2XX ${r.non2xx}` : '', Object.values(r.socketErrors).some((n) => n) ? ` SOCKET-ERRORS ${JSON.stringify(r.socketErrors)}` : ''].join('');
        console.log(
          `  ${scenario.padEnd(10)} ${peer.padEnd(7)} run ${i + 1}/${opts.runs}: ${fmtInt(r.reqPerSec).padStart(8)} req/s  p50 ${fmtMs(r.latencyMs.p50)}  p99 ${fmtMs(r.latencyMs.p99)}  ${r.cpuUsPerReq.toFixed(1)} CPU µs/req  server ${fmtPct(r.serverBusy)} busy  wrk ${fmtPct(r.wrkBusy)} busy${flags}`,
        );
      }
    }
  }

  const summary = summarize(results, opts);
  console.log('');
  printTable(summary);
  console.log(`\nMedian of ${opts.runs} run(s); p99 and CPU µs/req are medians too. Ratios compare medians from this invocation only.`);
  if (summary.some((r) => r.vsExpress === undefined || r.vsSirv === undefined)) {
    console.log('—: that peer has no row for the scenario (Express runs the dynamic scenarios only, sirv the static ones) or was not selected.');
  }
  if (summary.some((r) => r.generatorBoundRuns)) {
    console.log(`generator-bound: wrk was >= ${GENERATOR_BOUND * 100}% busy, so that figure is a floor for the server, not its limit.`);
  }
  if (summary.some((r) => r.noisyRuns)) {
    console.log(`noisy: other processes or hypervisor steal took >= ${CONTENDED * 100}% of a pinned core during the run; rerun on a quiet machine.`);
  }

  mkdirSync(RESULTS_DIR, { recursive: true });
  const stamp = startedAt.toISOString().replace(/\.\d+Z$/, 'Z').replaceAll(':', '-');
  const file = path.join(RESULTS_DIR, `quick-${stamp}.json`);
  const record = {
    tool: 'bench/quick.mjs',
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    options: { ...opts, wrkThreads: WRK_THREADS, wrkConnections: WRK_CONNECTIONS, generatorBoundThreshold: GENERATOR_BOUND },
    scenarios: Object.fromEntries(opts.scenarios.map((s) => [s, SCENARIOS[s].path])),
    scenarioPeers: Object.fromEntries(opts.scenarios.map((s) => [s, peersFor(s, opts)])),
    staticFiles: STATIC_FILES,
    staticHeaders,
    environment: { ...env, staticFiles: undefined, loadavgStart, loadavgEnd: os.loadavg() },
    summary,
    runs: results,
  };
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
  console.log(`Raw figures: ${path.relative(process.cwd(), file)}`);

  const errored = summary.filter((r) => r.erroredRuns);
  if (errored.length) {
    console.error(`bench: some runs had non-2xx answers or socket errors (${errored.map((r) => `${r.scenario}/${r.server}`).join(', ')}): see the JSON`);
    process.exitCode = 1;
  }
}

main().catch((err) => {
  if (interrupted) return;
  console.error(`\nbench: ${err.message}`);
  killAll();
  process.exit(1);
});
