#!/usr/bin/env node
// Tachyon's benchmark suite: Tachyon against raw uWebSockets.js (the ceiling) and the usual
// Node.js, Bun and Deno servers, over HTTP (wrk) and WebSocket (bench/loadgen) scenarios.
//
//   npm run bench                         # everything (see bench/README.md for the time)
//   npm run bench -- --quick              # the quick subset, about 3 minutes
//   npm run bench -- --smoke              # every scenario ~1 s, 1 run, uws + tachyon (+ coalesced fan-out) (CI)
//   npm run bench -- --only http-realistic --peers uws,tachyon,fastify --runs 5 --duration 10
//
// Method (bench/README.md): correctness checks first; a fresh server process per run pinned
// to CPU 0, the load generator pinned to CPU 1; a warm-up that is not counted; runs of the
// peers interleaved; medians; every ratio against raw uWS from the same invocation; server
// CPU time per request/message from /proc/<pid>/stat; generator-bound runs flagged.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const HERE = path.dirname(fileURLToPath(import.meta.url));

// Always measure on the repository's pinned Node (the `node` devDependency): peers differ by
// up to 4x between Node majors, so a stray system Node would make the figures meaningless.
{
  const pinned = path.join(HERE, '..', 'node_modules', 'node', 'bin', 'node');
  const pinnedVersion = existsSync(pinned)
    ? JSON.parse(readFileSync(path.join(HERE, '..', 'node_modules', 'node', 'package.json'), 'utf8')).version
    : null;
  if (pinnedVersion && process.versions.node !== pinnedVersion) {
    console.log(`(re-running with the pinned Node ${pinnedVersion}; this is ${process.version})`);
    const r = spawnSync(pinned, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
    process.exit(r.status ?? 1);
  }
}

const { createStaticFixtures } = await import('./static-fixtures.mjs');
const { ALIASES, ECHO_LOAD, FANOUT_LOAD, HTTP_LOAD, OPT_IN_PEERS, PEER_ORDER, QUICK, SCENARIOS, SMOKE } = await import(
  './lib/scenarios.mjs'
);
const { PEERS, peerProblem, probeRuntimes, serverArgv, pkgJson } = await import('./lib/peers.mjs');
const { ensureLoadgen, ensureWrk, environment, nofileStatus } = await import('./lib/env.mjs');
const { installSignalHandlers, killAll, startServer, stopServer, wasInterrupted } = await import('./lib/procs.mjs');
const { checkHttp, checkWs } = await import('./lib/checks.mjs');
const { measureHttp, measureWs } = await import('./lib/measure.mjs');
const { LEGEND, evaluateGoals, goalLines, orderRows, resultsMarkdown, summarize, terminalTable } = await import('./lib/report.mjs');
const { writeCharts } = await import('./lib/charts.mjs');
const { ensureBenchInstall } = await import('./lib/install.mjs');
const { BENCH_DIR, BenchError, CHARTS_DIR, REPO_DIR, RESULTS_DIR, fail, fmtCpu, fmtDuration, fmtInt, fmtMs, fmtPct } = await import(
  './lib/util.mjs'
);

const REFERENCE = new Set(['uws', 'tachyon', 'tachyon-coalesced']); // their failures fail the invocation
// Benchmarks of one feature, each its own script: --smoke runs them with --smoke too (after the
// scenarios), so that they keep working. A failure fails the invocation.
const SMOKE_SCRIPTS = ['sse-fanout.mjs', 'ws-request.mjs'];
const SCENARIO_NAMES = Object.keys(SCENARIOS);

const USAGE = `Usage: npm run bench -- [options]      (or: node bench/run.mjs [options])

  --quick           the quick subset: ${QUICK.scenarios.join(', ')}
                    with ${QUICK.peers.join(', ')}; 3 runs x 1 s after 1 s warm-up (about 3 minutes)
  --smoke           every scenario, 1 run x 1 s after 0.5 s warm-up, peers ${SMOKE.peers.join(',')} (CI; < 3 minutes),
                    then ${SMOKE_SCRIPTS.join(', ')} --smoke; with --quick: the quick subset at those settings
  --only LIST       scenarios or groups, comma-separated (see --list)
  --peers LIST      servers, comma-separated (see --list)
  --runs N          measured runs per (scenario, server), interleaved; default 3
  --duration S      seconds per measured run (whole seconds for HTTP: wrk's unit); default 5
  --warmup S        seconds of warm-up load per run, not counted; default 2
  --hold S          seconds the connection scenarios hold their connections; default 1
  --write-results   regenerate bench/RESULTS.md and the charts even for a partial selection
  --no-write-results  never touch bench/RESULTS.md and the charts
  --render FILE     only regenerate RESULTS.md and the charts from a results JSON
  --list            list the scenarios, groups and peers
  -h, --help        this text`;

function parseOptions() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        quick: { type: 'boolean', default: false },
        smoke: { type: 'boolean', default: false },
        only: { type: 'string' },
        peers: { type: 'string' },
        runs: { type: 'string' },
        duration: { type: 'string' },
        warmup: { type: 'string' },
        hold: { type: 'string' },
        'write-results': { type: 'boolean', default: false },
        'no-write-results': { type: 'boolean', default: false },
        render: { type: 'string' },
        list: { type: 'boolean', default: false },
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
  if (values.list) {
    console.log('Scenarios:');
    for (const [name, s] of Object.entries(SCENARIOS))
      console.log(`  ${name.padEnd(22)} ${s.title}\n  ${''.padEnd(22)} peers: ${s.peers.join(', ')}`);
    console.log('\nGroups and short names for --only:');
    for (const [name, list] of Object.entries(ALIASES)) console.log(`  ${name.padEnd(16)} ${list.join(', ')}`);
    console.log('\nPeers:');
    for (const p of PEER_ORDER) console.log(`  ${p.padEnd(17)} ${PEERS[p].about}`);
    process.exit(0);
  }
  // --quick picks the quick subset and its settings; --smoke the smoke settings (and, without
  // --quick, every scenario with uws and tachyon): `--quick --smoke` checks the quick subset.
  const mode = values.smoke ? 'smoke' : values.quick ? 'quick' : 'full';
  const settings = {
    full: { runs: 3, duration: 5, warmup: 2, hold: 1 },
    quick: { runs: 3, duration: 1, warmup: 1, hold: 1 },
    smoke: { runs: 1, duration: 1, warmup: 0.5, hold: 0.5 },
  }[mode];
  const selection = values.quick
    ? QUICK
    : values.smoke
      ? { scenarios: SCENARIO_NAMES, peers: SMOKE.peers }
      : { scenarios: SCENARIO_NAMES, peers: PEER_ORDER.filter((p) => !OPT_IN_PEERS.includes(p)) };
  const defaults = { ...settings, ...selection };
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
  let scenarios = defaults.scenarios;
  if (values.only !== undefined) {
    const wanted = new Set();
    for (const item of values.only
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const expanded = SCENARIOS[item] ? [item] : (ALIASES[item] ?? SCENARIO_NAMES.filter((s) => s.startsWith(`${item}-`)));
      if (!expanded.length) fail(`unknown scenario ${item}; see --list`);
      for (const s of expanded) wanted.add(s);
    }
    if (!wanted.size) fail('--only: no scenario given');
    scenarios = SCENARIO_NAMES.filter((s) => wanted.has(s));
  }
  let peers = defaults.peers;
  if (values.peers !== undefined) {
    const items = values.peers
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const bad = items.filter((p) => !PEERS[p]);
    if (bad.length || !items.length) fail(`unknown peer: ${bad.join(', ') || '(empty)'}; expected some of ${PEER_ORDER.join(',')}`);
    peers = PEER_ORDER.filter((p) => items.includes(p));
  }
  const opts = {
    mode,
    partial: values.only !== undefined || values.peers !== undefined,
    smokeScripts: mode === 'smoke' && !values.quick && values.only === undefined && values.peers === undefined,
    runs: int(values.runs, 'runs', defaults.runs),
    duration: int(values.duration, 'duration', defaults.duration),
    warmup: seconds(values.warmup, 'warmup', defaults.warmup),
    hold: seconds(values.hold, 'hold', defaults.hold),
    scenarios,
    peers,
    writeResults: values['no-write-results']
      ? false
      : values['write-results']
        ? true
        : mode !== 'smoke' && values.only === undefined && values.peers === undefined,
    render: values.render,
  };
  const empty = opts.scenarios.filter((s) => !SCENARIOS[s].peers.some((p) => opts.peers.includes(p)));
  if (empty.length === opts.scenarios.length)
    fail(`no selected server implements any selected scenario (${empty.map((s) => `${s}: ${SCENARIOS[s].peers.join(',')}`).join('; ')})`);
  if (empty.length) {
    console.log(`bench: skipping ${empty.join(', ')}: no selected server implements ${empty.length > 1 ? 'them' : 'it'}`);
    opts.scenarios = opts.scenarios.filter((s) => !empty.includes(s));
  }
  return opts;
}

const log = (line) => console.log(line);

/** Installs the bench's own dependencies when a selected peer's package is missing. */
function ensurePeerPackages(peers) {
  ensureBenchInstall([...new Set(peers.flatMap((p) => PEERS[p].packages.filter((pkg) => !pkgJson(pkg))))], log);
}

function planRuns(opts, env, runtimes, loadgen) {
  const plan = {};
  const nofile = {};
  for (const s of opts.scenarios) {
    const sc = SCENARIOS[s];
    let scenarioProblem;
    if (sc.kind === 'ws' && loadgen.error) scenarioProblem = loadgen.error;
    if (sc.mode === 'connections') {
      const want = sc.count + 1024;
      const st = nofileStatus(want);
      nofile[s] = st;
      if (!st.ok) scenarioProblem ??= `needs ${want} open files per process: ${st.reason}`;
    }
    plan[s] = opts.peers
      .filter((p) => sc.peers.includes(p))
      .map((peer) => ({ peer, unavailable: scenarioProblem ?? peerProblem(peer, runtimes) }));
  }
  return { plan, nofile };
}

function markUnavailable(plan, peer, scenarios, reason) {
  for (const s of scenarios) {
    const e = plan[s]?.find((x) => x.peer === peer);
    if (e && !e.unavailable) e.unavailable = reason;
  }
}

/** Correctness pass, one fresh process per peer. Returns the static headers for the record. */
async function verify(plan, opts, env, runtimes) {
  const peers = PEER_ORDER.filter((p) => opts.scenarios.some((s) => plan[s].some((x) => x.peer === p && !x.unavailable)));
  const bodies = {};
  const staticHeaders = {};
  let referenceFailure;
  for (const peer of peers) {
    const scenarios = opts.scenarios.filter((s) => plan[s].some((x) => x.peer === peer && !x.unavailable));
    let server;
    try {
      server = await startServer(peer, serverArgv(peer, runtimes), env);
    } catch (err) {
      const reason = `could not start: ${err.message.split('\n').filter(Boolean).slice(0, 3).join(' / ').slice(0, 400)}`;
      console.log(`  FAIL ${peer.padEnd(16)} ${reason}`);
      markUnavailable(plan, peer, scenarios, reason);
      if (REFERENCE.has(peer)) referenceFailure = `${peer}: ${reason}`;
      continue;
    }
    const problems = [];
    const checked = [];
    try {
      for (const s of scenarios) {
        const r = SCENARIOS[s].kind === 'http' ? await checkHttp(server, s, env) : await checkWs(server, s, env);
        if (r.error) {
          problems.push(r.error);
          markUnavailable(plan, peer, [s], `failed the correctness check: ${r.error}`);
          continue;
        }
        checked.push(s);
        if (r.body) (bodies[s] ??= {})[peer] = r.body;
        if (r.headers && s === 'http-static-4k') staticHeaders[peer] = r.headers;
      }
      if (server.died) problems.push(`${peer} server died during the checks (${server.died}): ${server.stderr().slice(-500)}`);
    } finally {
      await stopServer(server);
    }
    if (problems.length) {
      console.log(`  FAIL ${peer.padEnd(16)} ${problems.join('\n       ')}`);
      if (REFERENCE.has(peer)) referenceFailure ??= problems.join('; ');
    }
    if (checked.length) console.log(`  ok   ${peer.padEnd(16)} ${checked.join(', ')}`);
  }
  // The realistic scenarios' JSON must be byte-identical across peers (uWS's is the reference).
  for (const [s, byPeer] of Object.entries(bodies)) {
    const ref = byPeer.uws ?? byPeer.tachyon ?? Object.values(byPeer)[0];
    for (const [peer, body] of Object.entries(byPeer)) {
      if (body === ref) continue;
      const reason = `failed the correctness check: its ${s} JSON differs from the others': ${body.slice(0, 300)}`;
      console.log(`  FAIL ${peer.padEnd(16)} ${reason}`);
      markUnavailable(plan, peer, [s], reason);
      if (REFERENCE.has(peer)) referenceFailure ??= reason;
    }
  }
  if (referenceFailure) fail(`correctness check failed for a reference server (${referenceFailure}); nothing measured`);
  const skip = new Set(['date', 'connection', 'keep-alive']);
  return Object.fromEntries(
    Object.entries(staticHeaders).map(([p, h]) => [p, Object.fromEntries(Object.entries(h).filter(([k]) => !skip.has(k)))]),
  );
}

function estimateSeconds(plan, opts) {
  let total = 0;
  for (const [s, peers] of Object.entries(plan)) {
    const n = peers.filter((x) => !x.unavailable).length * opts.runs;
    const sc = SCENARIOS[s];
    const per =
      sc.mode === 'connections' ? sc.count / 6000 + opts.hold + 1.5 : opts.warmup + opts.duration + (sc.kind === 'ws' ? 0.9 : 0.6);
    total += n * per;
  }
  return total;
}

function keptSections(text) {
  return Array.from(text.matchAll(/<!-- bench:([\w-]+) -->[\s\S]*?<!-- \/bench:\1 -->/g), (m) => `\n${m[0]}\n`).join('');
}

function writeReport(record, rows, goals) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const charts = writeCharts(rows, CHARTS_DIR, BENCH_DIR);
  const file = path.join(BENCH_DIR, 'RESULTS.md');
  // Sections written by other scripts (the game capacity by bench/game.mjs, the soak by hand
  // from bench/soak-chart.mjs), each between <!-- bench:NAME --> markers: kept as they are.
  const kept = existsSync(file) ? keptSections(readFileSync(file, 'utf8')) : '';
  writeFileSync(file, resultsMarkdown(record, rows, goals, charts) + kept);
  return charts;
}

/** SMOKE_SCRIPTS, each with --smoke, one after the other. */
function runSmokeScripts() {
  for (const script of SMOKE_SCRIPTS) {
    log(`\nbench/${script} --smoke:`);
    const r = spawnSync(process.execPath, [path.join(HERE, script), '--smoke'], { stdio: 'inherit' });
    if (r.status !== 0) {
      console.error(`bench: bench/${script} --smoke failed (${r.signal ?? `exit ${r.status}`})`);
      process.exitCode = 1;
    }
  }
}

async function main() {
  installSignalHandlers();
  const opts = parseOptions();

  if (opts.render) {
    const record = JSON.parse(readFileSync(opts.render, 'utf8'));
    record.file ??= path.relative(BENCH_DIR, path.resolve(opts.render));
    const rows = orderRows(summarize(record));
    const goals = evaluateGoals(rows);
    const charts = writeReport(record, rows, goals);
    log(`bench: regenerated bench/RESULTS.md and ${Object.keys(charts).length} chart(s) in bench/results/charts from ${opts.render}`);
    return;
  }

  const t0 = Date.now();
  const startedAt = new Date();
  const kinds = new Set(opts.scenarios.map((s) => SCENARIOS[s].kind));
  log(`Tachyon benchmark suite (${opts.mode}${opts.partial ? ', partial selection' : ''})`);
  const installed = {};
  if (kinds.has('http')) installed.wrk = ensureWrk(log);
  const loadgen = kinds.has('ws') ? ensureLoadgen(log) : { bin: undefined };
  if (loadgen.error) log(`bench: WARNING ${loadgen.error}: the WebSocket scenarios are unavailable`);
  installed.loadgen = loadgen.error ? `unavailable: ${loadgen.error}` : loadgen.built ? 'built' : 'present';
  ensurePeerPackages(opts.peers.filter((p) => opts.scenarios.some((s) => SCENARIOS[s].peers.includes(p))));
  if (opts.peers.includes('tachyon') && !existsSync(path.join(REPO_DIR, 'packages', 'server', 'dist', 'index.js'))) {
    fail('packages/server/dist is missing: run `npm run build` at the repository root first');
  }
  const runtimes = probeRuntimes();
  const env = environment(runtimes);
  env.loadgenBin = loadgen.bin;
  if (!env.pin) log('bench: WARNING taskset not found: nothing is pinned, figures are much noisier');
  else if (env.cpus < 2) log('bench: WARNING fewer than 2 CPUs: server and load generator share CPU 0, figures are not meaningful');

  const fixtures = createStaticFixtures();
  process.on('exit', fixtures.remove);
  env.staticDir = fixtures.dir;
  env.staticFiles = fixtures.files;

  const { plan, nofile } = planRuns(opts, env, runtimes, loadgen);
  env.nofile = {
    soft: Object.values(nofile)[0]?.soft ?? Number(spawnSync('sh', ['-c', 'ulimit -Sn'], { encoding: 'utf8' }).stdout),
    hard: Object.values(nofile)[0]?.hard ?? Number(spawnSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).stdout),
  };

  log(
    `node ${env.node}, uWS ${env.packages['uWebSockets.js']}, bun ${env.bun ?? '—'}, deno ${env.deno ?? '—'}, kernel ${env.kernel}, ${env.cpuModel} (${env.cpus} CPUs); server on CPU ${env.serverCpu}, load generator on CPU ${env.loadCpu}; load avg ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
  log(
    `${opts.scenarios.length} scenario(s) x ${opts.runs} run(s) x ${opts.duration} s after ${opts.warmup} s warm-up; peers: ${opts.peers.join(', ')}`,
  );
  const unavailable = Object.entries(plan).flatMap(([s, ps]) => ps.filter((x) => x.unavailable).map((x) => ({ s, ...x })));
  const reasons = new Map();
  for (const u of unavailable)
    (reasons.get(`${u.peer}: ${u.unavailable}`) ?? reasons.set(`${u.peer}: ${u.unavailable}`, []).get(`${u.peer}: ${u.unavailable}`)).push(
      u.s,
    );
  for (const [why, ss] of reasons) log(`  unavailable on ${ss.join(', ')}: ${why}`);

  log('\nCorrectness check (one fresh process per server):');
  const staticHeaders = await verify(plan, opts, env, runtimes);

  const total = Object.values(plan).reduce((n, ps) => n + ps.filter((x) => !x.unavailable).length * opts.runs, 0);
  log(`\nMeasuring ${total} run(s), about ${fmtDuration(estimateSeconds(plan, opts))}:`);
  const results = [];
  const loadavgStart = os.loadavg();
  let done = 0;
  const tMeasure = Date.now();
  for (const scenario of opts.scenarios) {
    const sc = SCENARIOS[scenario];
    const peers = plan[scenario].filter((x) => !x.unavailable).map((x) => x.peer);
    for (let i = 0; i < opts.runs; i++) {
      for (const peer of peers) {
        const head = `${scenario} ${peer} run ${i + 1}/${opts.runs}`;
        let r;
        let server;
        try {
          server = await startServer(
            peer,
            serverArgv(peer, runtimes),
            env,
            sc.mode === 'connections' ? { nofile: Math.max(sc.count + 1024, nofile[scenario]?.hard ?? 0) } : {},
          );
          const m = sc.kind === 'http' ? await measureHttp(server, scenario, opts, env) : await measureWs(server, scenario, opts, env);
          r = { scenario, peer, run: i + 1, serverPid: server.pid, ...m };
        } catch (err) {
          if (wasInterrupted()) return;
          r = { scenario, peer, run: i + 1, failure: err.message.slice(0, 2000) };
        } finally {
          if (server) await stopServer(server);
        }
        results.push(r);
        done++;
        const elapsed = (Date.now() - tMeasure) / 1000;
        const eta = (elapsed / done) * (total - done);
        const prefix = `  [${String(done).padStart(String(total).length)}/${total} ${fmtDuration(elapsed)} +~${fmtDuration(eta)}] ${head.padEnd(44)}`;
        if (r.failure) {
          log(`${prefix} FAILED: ${r.failure.split('\n')[0]}`);
          continue;
        }
        const flags = [
          r.generatorBound ? ' GENERATOR-BOUND' : '',
          r.contended
            ? ` NOISY (others+steal: CPU ${env.serverCpu} ${fmtPct(r.serverCoreLost)}, CPU ${env.loadCpu} ${fmtPct(r.loadCoreLost)})`
            : '',
          r.lossy ? ` LOSSY (fan-out ${r.fanoutRatio}/${r.expectedFanout})` : '',
          r.errors ? ` ERRORS ${JSON.stringify(r.errorDetail ?? r.reasons)}` : '',
          r.rssPerConnBytes !== undefined && r.rssPerConnBytes !== null ? ` ${(r.rssPerConnBytes / 1024).toFixed(1)} KiB/conn` : '',
        ].join('');
        log(
          `${prefix} ${fmtInt(r.perSec).padStart(10)} ${sc.unit}  p99 ${fmtMs(r.latencyMs?.p99)}  ${fmtCpu(r.cpuUsPer)} µs/${sc.per}  server ${fmtPct(r.serverBusy)}  gen ${fmtPct(r.genBusy)}${flags}`,
        );
      }
    }
  }

  const stamp = startedAt
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replaceAll(':', '-');
  const file = path.join(RESULTS_DIR, `${stamp}${opts.mode === 'smoke' ? '-smoke' : ''}.json`);
  const record = {
    tool: 'bench/run.mjs',
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    file: path.relative(BENCH_DIR, file),
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    durationS: (Date.now() - t0) / 1000,
    options: { ...opts, render: undefined },
    installed,
    load: { http: HTTP_LOAD, echo: ECHO_LOAD, fanout: FANOUT_LOAD },
    scenarios: Object.fromEntries(opts.scenarios.map((s) => [s, SCENARIOS[s]])),
    plan,
    staticHeaders,
    environment: { ...env, staticFiles: undefined, staticDir: undefined, loadgenBin: undefined, loadavgStart, loadavgEnd: os.loadavg() },
    runs: results,
  };
  const rows = orderRows(summarize(record));
  const goals = evaluateGoals(rows);
  record.summary = rows;
  record.goals = goals;

  log('');
  log(terminalTable(rows));
  log('');
  for (const l of LEGEND) log(l);
  if (goals.length) {
    log('\nGoals (reported, not asserted):');
    for (const l of goalLines(goals)) log(l);
  }
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
  log(`\nRaw figures: ${path.relative(process.cwd(), file)}`);
  if (opts.writeResults) {
    const charts = writeReport(record, rows, goals);
    log(
      `Regenerated ${path.relative(process.cwd(), path.join(BENCH_DIR, 'RESULTS.md'))} and ${Object.keys(charts).length} chart(s) in ${path.relative(process.cwd(), CHARTS_DIR)}`,
    );
  } else {
    log(`bench/RESULTS.md not regenerated (${opts.mode === 'smoke' ? 'smoke run' : 'partial selection'}; --write-results forces it)`);
  }
  if (opts.smokeScripts) runSmokeScripts();
  log(`Total time: ${fmtDuration((Date.now() - t0) / 1000)}`);

  const bad = rows.filter((r) => REFERENCE.has(r.peer) && (r.status === 'failed' || r.erroredRuns || r.failedRuns));
  if (bad.length) {
    console.error(`bench: ${bad.map((r) => `${r.scenario}/${r.peer}`).join(', ')}: errors or failed runs (see the JSON)`);
    process.exitCode = 1;
  }
  const others = rows.filter((r) => !REFERENCE.has(r.peer) && (r.status === 'failed' || r.erroredRuns || r.failedRuns));
  if (others.length)
    log(
      `bench: note: ${others.map((r) => `${r.scenario}/${r.peer}`).join(', ')} had errors or failed runs (reported in the table; they do not fail the invocation)`,
    );
}

main().catch((err) => {
  if (wasInterrupted()) return;
  console.error(`\nbench: ${err instanceof BenchError ? err.message : err.stack}`);
  killAll();
  process.exit(1);
});
