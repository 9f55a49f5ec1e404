#!/usr/bin/env node
// Request-dedup measurement: bursts of concurrent GETs, each on its own connection, at the
// same slow handler with and without `{ dedup: true }`.
//
//   npm run bench:dedup
//   node bench/dedup.mjs --bursts 10 --concurrency 200 --delay 5
//
// The Tachyon server (bench/servers/dedup-tachyon.mjs) runs in a child process pinned to
// CPU 0; this process, the client, pins itself to CPU 1. The client keeps `concurrency`
// keep-alive connections open (warm-up bursts on each route open them and are not
// counted), then each burst sends one request on every connection at once. Bursts
// alternate between the two routes. Per burst: handler calls (read from the server's
// counters before and after), the spread between the first and the last request's
// arrival at the server (an app middleware, before the dedup gate, takes the times), wall
// time from the first request sent to the last response received, per-request latency,
// and checks: every answer 200, every body identical to the
// expected page, `concurrency` distinct connections used.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));

// Same rule as quick.mjs: always run on the repository's pinned Node.
{
  const pinned = path.join(BENCH_DIR, '..', 'node_modules', 'node', 'bin', 'node');
  const pinnedVersion = existsSync(pinned)
    ? JSON.parse(readFileSync(path.join(BENCH_DIR, '..', 'node_modules', 'node', 'package.json'), 'utf8')).version
    : null;
  if (pinnedVersion && process.versions.node !== pinnedVersion) {
    console.log(`(re-running with the pinned Node ${pinnedVersion}; this is ${process.version})`);
    const r = spawnSync(pinned, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
    process.exit(r.status ?? 1);
  }
}
const REPO_DIR = path.resolve(BENCH_DIR, '..');
const RESULTS_DIR = path.join(BENCH_DIR, 'results');
const SERVER_SCRIPT = path.join(BENCH_DIR, 'servers', 'dedup-tachyon.mjs');
const ROUTES = { dedup: '/page', nodedup: '/page-nodedup' };
const READY_TIMEOUT_MS = 15_000;

const USAGE = `Usage: node bench/dedup.mjs [options]

  --bursts N        measured bursts per route (alternating routes); default 10
  --concurrency N   requests per burst, each on its own connection; default 200
  --delay MS        handler time (an awaited timer); default 5
  --warmup N        discarded bursts per route first (opens the connections, warms the JIT); default 3
  -h, --help        this text`;

function fail(message) {
  console.error(`\ndedup: ${message}`);
  process.exit(1);
}

function options() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        bursts: { type: 'string' },
        concurrency: { type: 'string' },
        delay: { type: 'string' },
        warmup: { type: 'string' },
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
  const int = (value, name, dflt, min) => {
    if (value === undefined) return dflt;
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) fail(`--${name} must be a whole number >= ${min}, got ${value}`);
    return n;
  };
  return {
    bursts: int(values.bursts, 'bursts', 10, 1),
    concurrency: int(values.concurrency, 'concurrency', 200, 1),
    delayMs: int(values.delay, 'delay', 5, 0),
    warmupBursts: int(values.warmup, 'warmup', 3, 1),
  };
}

function which(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).status === 0;
}

// ------------------------------------------------------------------ server

let child;
process.on('exit', () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
});
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => process.exit(sig === 'SIGINT' ? 130 : 143));

function startServer(opts, pin) {
  const args = pin ? ['-c', '0', process.execPath, SERVER_SCRIPT] : [SERVER_SCRIPT];
  child = spawn(pin ? 'taskset' : process.execPath, args, {
    cwd: BENCH_DIR,
    env: { ...process.env, PORT: '0', BENCH_HARNESS: '1', NODE_ENV: 'production', DEDUP_DELAY_MS: String(opts.delayMs) },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdin.on('error', () => {});
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server printed no READY line within ${READY_TIMEOUT_MS / 1000} s\n${stderr}`)),
      READY_TIMEOUT_MS,
    );
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${signal ?? `code ${code}`}) before it was ready\n${stdout}\n${stderr}`));
    });
    child.stdout.setEncoding('utf8').on('data', (d) => {
      stdout += d;
      const m = /^READY (\d+)\s*$/m.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  });
}

// ------------------------------------------------------------------ client

/** One GET; resolves with status, body, socket local port and latency (ms). */
function get(port, urlPath, agent) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, agent, timeout: 10_000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode,
          body: Buffer.concat(chunks).toString('utf8'),
          contentType: res.headers['content-type'],
          localPort: req.socket?.localPort,
          ms: performance.now() - t0,
        }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timed out after 10 s')));
    req.on('error', reject);
  });
}

async function calls(port) {
  const r = await get(port, '/calls', false); // own connection: the burst pool stays untouched
  return JSON.parse(r.body);
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function burst(port, route, opts, agent, expected) {
  const key = route === 'dedup' ? 'page' : 'nodedup';
  const before = (await calls(port))[key];
  const t0 = performance.now();
  const settled = await Promise.allSettled(Array.from({ length: opts.concurrency }, () => get(port, ROUTES[route], agent)));
  const wallMs = performance.now() - t0;
  const counters = await calls(port);
  const after = counters[key];
  const ok = settled.filter((s) => s.status === 'fulfilled').map((s) => s.value);
  const errors = settled.filter((s) => s.status === 'rejected').map((s) => s.reason.message);
  const latencies = ok.map((r) => r.ms).sort((a, b) => a - b);
  return {
    route,
    path: ROUTES[route],
    handlerCalls: after - before,
    wallMs,
    arrivalSpreadMs: counters.arrivalSpreadMs?.[key] ?? undefined,
    p50Ms: pct(latencies, 50),
    maxMs: latencies[latencies.length - 1],
    responses: ok.length,
    status200: ok.filter((r) => r.status === 200).length,
    identical: ok.filter((r) => r.body === expected).length,
    distinctBodies: new Set(ok.map((r) => r.body)).size,
    distinctConnections: new Set(ok.map((r) => r.localPort)).size,
    errors: [...new Set(errors)],
  };
}

// -------------------------------------------------------------------- main

function median(xs) {
  const v = [...xs].sort((a, b) => a - b);
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

function table(header, rows, right) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => `| ${cells.map((c, i) => (right.has(i) ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w, i) => (right.has(i) ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`);
  for (const r of rows) console.log(line(r));
}

async function main() {
  const opts = options();
  if (!existsSync(path.join(REPO_DIR, 'packages', 'server', 'dist', 'index.js')))
    fail('packages/server/dist is missing: run `npm run build` at the repo root first');
  const cpus = os.availableParallelism?.() ?? os.cpus().length;
  const pin = which('taskset') && cpus >= 2;
  // The client pins itself (all its threads) to CPU 1, away from the server on CPU 0.
  if (pin) spawnSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });

  const startedAt = new Date();
  console.log(
    `Tachyon dedup bench: ${opts.bursts} burst(s) per route of ${opts.concurrency} concurrent GETs on ${opts.concurrency} connections; handler takes ${opts.delayMs} ms`,
  );
  console.log(`node ${process.version}, ${cpus} CPUs; ${pin ? 'server on CPU 0, client on CPU 1' : 'not pinned'}`);
  const port = await startServer(opts, pin);

  // The expected page, from a request outside the pool.
  const first = await get(port, ROUTES.nodedup, false);
  if (first.status !== 200 || !String(first.contentType).startsWith('application/json'))
    fail(`GET ${ROUTES.nodedup}: status ${first.status}, content-type ${first.contentType}`);
  const expected = first.body;

  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.concurrency, maxFreeSockets: opts.concurrency, scheduling: 'fifo' });
  // Warm-up: opens the connections and warms the JIT on both routes; not counted.
  for (let i = 0; i < opts.warmupBursts; i++) for (const route of ['dedup', 'nodedup']) await burst(port, route, opts, agent, expected);

  const results = [];
  for (let i = 0; i < opts.bursts; i++) {
    // Alternate which route goes first, so drift affects both alike.
    const order = i % 2 === 0 ? ['dedup', 'nodedup'] : ['nodedup', 'dedup'];
    for (const route of order) {
      const r = await burst(port, route, opts, agent, expected);
      r.burst = i + 1;
      results.push(r);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  agent.destroy();

  console.log('');
  const rows = [...results].sort((a, b) => (a.route === b.route ? a.burst - b.burst : a.route === 'dedup' ? -1 : 1));
  table(
    ['route', 'burst', 'handler calls', 'wall ms', 'arrival spread ms', 'p50 ms', 'max ms', '200 OK', 'identical', 'connections'],
    rows.map((r) => [
      r.path,
      String(r.burst),
      String(r.handlerCalls),
      r.wallMs.toFixed(1),
      r.arrivalSpreadMs?.toFixed(1) ?? '—',
      r.p50Ms?.toFixed(1) ?? '—',
      r.maxMs?.toFixed(1) ?? '—',
      `${r.status200}/${opts.concurrency}`,
      `${r.identical}/${opts.concurrency}`,
      String(r.distinctConnections),
    ]),
    new Set([1, 2, 3, 4, 5, 6, 7, 8, 9]),
  );

  const summary = Object.keys(ROUTES).map((route) => {
    const rs = results.filter((r) => r.route === route);
    return {
      route,
      path: ROUTES[route],
      bursts: rs.length,
      medianHandlerCalls: median(rs.map((r) => r.handlerCalls)),
      minHandlerCalls: Math.min(...rs.map((r) => r.handlerCalls)),
      maxHandlerCalls: Math.max(...rs.map((r) => r.handlerCalls)),
      medianWallMs: median(rs.map((r) => r.wallMs)),
      medianArrivalSpreadMs: rs.every((r) => r.arrivalSpreadMs !== undefined) ? median(rs.map((r) => r.arrivalSpreadMs)) : undefined,
      medianP50Ms: median(rs.map((r) => r.p50Ms)),
      allOk: rs.every((r) => r.status200 === opts.concurrency && r.identical === opts.concurrency && r.errors.length === 0),
    };
  });
  console.log('');
  table(
    [
      'route',
      'handler calls per burst (median, min–max)',
      'wall ms per burst (median)',
      'arrival spread ms (median)',
      'p50 ms (median)',
      'all 200 + identical',
    ],
    summary.map((s) => [
      s.path,
      `${s.medianHandlerCalls} (${s.minHandlerCalls}–${s.maxHandlerCalls})`,
      s.medianWallMs.toFixed(1),
      s.medianArrivalSpreadMs?.toFixed(1) ?? '—',
      s.medianP50Ms.toFixed(1),
      s.allOk ? 'yes' : 'NO',
    ]),
    new Set([1, 2, 3, 4]),
  );
  const [d, n] = summary;
  console.log(
    `\n${opts.concurrency} concurrent requests, ${opts.delayMs} ms handler: ${d.medianHandlerCalls} handler call(s) per burst with dedup, ${n.medianHandlerCalls} without; wall time ${d.medianWallMs.toFixed(1)} ms vs ${n.medianWallMs.toFixed(1)} ms.`,
  );
  if (d.maxHandlerCalls > 1) {
    console.log(
      `More than one call with dedup means some requests reached the server after the leader had finished (arrival spread > the ${opts.delayMs} ms handler): they start a new group.`,
    );
  }
  const fewer = results.filter((r) => r.distinctConnections !== opts.concurrency);
  if (fewer.length) console.log(`note: ${fewer.length} burst(s) used fewer than ${opts.concurrency} distinct connections (see the JSON)`);

  mkdirSync(RESULTS_DIR, { recursive: true });
  const stamp = startedAt
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replaceAll(':', '-');
  const file = path.join(RESULTS_DIR, `dedup-${stamp}.json`);
  const tachyonPkg = path.join(REPO_DIR, 'packages', 'server', 'package.json');
  const record = {
    tool: 'bench/dedup.mjs',
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    options: opts,
    routes: ROUTES,
    environment: {
      node: process.version,
      tachyon: existsSync(tachyonPkg) ? JSON.parse(readFileSync(tachyonPkg, 'utf8')).version : undefined,
      cpus,
      cpuModel: os.cpus()[0]?.model,
      pin: pin ? { server: 0, client: 1 } : null,
      loadavg: os.loadavg(),
    },
    summary,
    bursts: results,
  };
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
  console.log(`Raw figures: ${path.relative(process.cwd(), file)}`);

  if (!summary.every((s) => s.allOk)) {
    for (const r of results.filter((x) => x.errors.length || x.status200 !== opts.concurrency || x.identical !== opts.concurrency)) {
      console.error(
        `dedup: ${r.path} burst ${r.burst}: ${r.status200} x 200, ${r.identical} identical, ${r.distinctBodies} distinct bodies, errors: ${r.errors.join('; ') || 'none'}`,
      );
    }
    process.exitCode = 1;
  }
}

main().then(
  () => process.exit(),
  (err) => fail(err.message),
); // exit: the 'exit' hook stops the server
