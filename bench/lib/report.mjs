// Medians, ratios, goals, the terminal table and bench/RESULTS.md.
import { PEERS } from './peers.mjs';
import { GOALS, PEER_ORDER, SCENARIOS } from './scenarios.mjs';
import { fmtCpu, fmtInt, fmtMs, fmtPct, fmtX, median, table } from './util.mjs';
import { CONTENDED, GENERATOR_BOUND } from './measure.mjs';

/** One row per (scenario, peer) selected: medians and ratios, or why it did not run. */
export function summarize(record) {
  const rows = [];
  for (const scenario of record.options.scenarios) {
    const peers = record.plan[scenario] ?? [];
    const runsOf = (peer) => record.runs.filter((r) => r.scenario === scenario && r.peer === peer && r.perSec !== undefined);
    const med = {};
    for (const { peer, unavailable } of peers) if (!unavailable) med[peer] = median(runsOf(peer).map((r) => r.perSec));
    for (const { peer, unavailable } of peers) {
      const base = { scenario, peer, label: PEERS[peer].label, unit: SCENARIOS[scenario].unit, per: SCENARIOS[scenario].per };
      if (unavailable) {
        rows.push({ ...base, status: 'unavailable', reason: unavailable });
        continue;
      }
      const runs = runsOf(peer);
      const failed = record.runs.filter((r) => r.scenario === scenario && r.peer === peer && r.failure);
      if (!runs.length) {
        rows.push({ ...base, status: 'failed', reason: failed[0]?.failure ?? 'no run completed' });
        continue;
      }
      const m = med[peer];
      const ratio = (a, b) => (a !== undefined && b ? a / b : undefined);
      rows.push({
        ...base,
        status: 'ok',
        runs: runs.length,
        failedRuns: failed.length,
        median: m,
        min: Math.min(...runs.map((r) => r.perSec)),
        max: Math.max(...runs.map((r) => r.perSec)),
        p50Ms: median(runs.map((r) => r.latencyMs?.p50)),
        p99Ms: median(runs.map((r) => r.latencyMs?.p99)),
        cpuUsPer: median(runs.map((r) => r.cpuUsPer)),
        serverBusy: median(runs.map((r) => r.serverBusy)),
        genBusy: median(runs.map((r) => r.genBusy)),
        vsUws: ratio(m, med.uws),
        tachyonOver: ratio(med.tachyon, m),
        generatorBoundRuns: runs.filter((r) => r.generatorBound).length,
        noisyRuns: runs.filter((r) => r.contended).length,
        erroredRuns: runs.filter((r) => r.errors > 0).length,
        lossyRuns: runs.filter((r) => r.lossy).length,
        fanoutRatio: median(runs.map((r) => r.fanoutRatio)),
        expectedFanout: runs[0].expectedFanout,
        rssPerConnBytes: median(runs.map((r) => r.rssPerConnBytes)),
      });
    }
  }
  return rows;
}

/** The goals of the issue, evaluated on this invocation's medians (reported, never asserted). */
export function evaluateGoals(rows) {
  const find = (s, p) => rows.find((r) => r.scenario === s && r.peer === p);
  const out = [];
  for (const g of GOALS) {
    const who = g.who ?? 'tachyon';
    const name = PEERS[who].label;
    const t = find(g.scenario, who);
    const o = find(g.scenario, g.vs);
    if (!t || !o) continue; // not selected in this invocation
    const goal = { ...g, label: `${name} ≥ ${g.min}× ${PEERS[g.vs].label} on ${g.scenario}` };
    if (t.status !== 'ok' || o.status !== 'ok') {
      out.push({
        ...goal,
        status: 'n/a',
        note: t.status !== 'ok' ? `${name} ${t.status}: ${t.reason}` : `${PEERS[g.vs].label} ${o.status}: ${o.reason}`,
      });
      continue;
    }
    const ratio = t.median / o.median;
    const cpuRatio = t.cpuUsPer && o.cpuUsPer ? o.cpuUsPer / t.cpuUsPer : undefined; // > 1: Tachyon spends less CPU per unit
    const bound = t.generatorBoundRuns > 0 && o.generatorBoundRuns > 0;
    const notes = [];
    if (bound)
      notes.push(
        `both generator-bound: throughput is a floor; server CPU per ${t.per}: ${fmtX(cpuRatio)} (${fmtCpu(o.cpuUsPer)} vs ${fmtCpu(t.cpuUsPer)} µs)`,
      );
    if (t.lossyRuns || o.lossyRuns)
      notes.push(`lossy fan-out: ${t.lossyRuns ? name : PEERS[g.vs].label} did not deliver every message within the drain`);
    if (t.noisyRuns || o.noisyRuns) notes.push('noisy runs');
    out.push({
      ...goal,
      ratio,
      cpuRatio,
      status: ratio >= g.min ? 'met' : bound && cpuRatio !== undefined && cpuRatio >= g.min ? 'met (CPU)' : 'missed',
      note: notes.join('; '),
    });
  }
  return out;
}

function flags(r) {
  const f = [];
  if (r.generatorBoundRuns) f.push(`generator-bound ${r.generatorBoundRuns}/${r.runs}`);
  if (r.noisyRuns) f.push(`noisy ${r.noisyRuns}/${r.runs}`);
  if (r.lossyRuns) f.push(`lossy ${r.lossyRuns}/${r.runs}`);
  if (r.erroredRuns) f.push(`ERRORS ${r.erroredRuns}/${r.runs}`);
  if (r.failedRuns) f.push(`FAILED ${r.failedRuns} run(s)`);
  return f.join(', ');
}

function notes(r) {
  if (r.fanoutRatio !== undefined)
    return `fan-out ${r.fanoutRatio.toFixed(r.fanoutRatio === r.expectedFanout ? 0 : 1)}/${r.expectedFanout}`;
  if (r.rssPerConnBytes !== undefined) return `${(r.rssPerConnBytes / 1024).toFixed(1)} KiB/conn`;
  return '';
}

function rowCells(r, { scenarioCol = true, markdown = false } = {}) {
  const first = scenarioCol ? [r.scenario] : [];
  if (r.status !== 'ok') {
    const why = `${r.status}: ${r.reason}`;
    return [
      ...first,
      r.label,
      '—',
      '—',
      '—',
      '—',
      '—',
      '—',
      markdown ? why.replaceAll('|', '\\|').replaceAll('\n', ' ') : why.split('\n')[0].slice(0, 160),
    ];
  }
  return [
    ...first,
    r.label,
    `${fmtInt(r.median)} ${r.unit}`,
    fmtMs(r.p99Ms),
    fmtCpu(r.cpuUsPer),
    fmtX(r.vsUws),
    r.peer === 'tachyon' ? '—' : fmtX(r.tachyonOver),
    notes(r),
    flags(r),
  ];
}

const HEADER = ['scenario', 'server', 'throughput (median)', 'p99', 'server CPU µs/unit', '× uWS', 'Tachyon ×', 'notes', 'flags'];

export function terminalTable(rows) {
  return table(
    HEADER,
    rows.map((r) => rowCells(r)),
    new Set([2, 3, 4, 5, 6]),
  );
}

export function goalLines(goals) {
  return goals.map((g) => {
    const v = g.ratio !== undefined ? fmtX(g.ratio) : '—';
    return `  ${g.status === 'met' || g.status === 'met (CPU)' ? 'met   ' : g.status === 'missed' ? 'MISSED' : 'n/a   '} ${g.label}: ${v}${g.status === 'met (CPU)' ? ' (met on server CPU per unit)' : ''}${g.note ? `  [${g.note}]` : ''}`;
  });
}

export const LEGEND = [
  `Medians of the runs; p99 and server CPU µs/unit are medians too. × uWS = this server / raw uWebSockets.js; Tachyon × = Tachyon / this server (how many times Tachyon's throughput), both from this invocation only.`,
  `generator-bound: the load generator was >= ${GENERATOR_BOUND * 100}% busy, so that throughput is a floor for the server, not its limit: compare server CPU µs/unit.`,
  `noisy: other processes or hypervisor steal took >= ${CONTENDED * 100}% of a pinned core during the run. lossy: a fan-out run in which the server did not deliver every message to every subscriber within the drain time (fan-out x/50 is the median delivered per message sent).`,
];

// ------------------------------------------------------------------ RESULTS.md

const md = (s) => String(s).replaceAll('|', '\\|');

export function resultsMarkdown(record, rows, goals, charts) {
  const env = record.environment;
  const o = record.options;
  const L = [];
  L.push('# Benchmark results', '');
  L.push(
    `Generated by \`bench/run.mjs\` (\`${record.command}\`) on ${record.startedAt.slice(0, 16).replace('T', ' ')} UTC; raw figures in [\`${record.file}\`](${record.file}). Regenerate with \`npm run bench\` (everything, about ${record.estimateFull ?? '40'} minutes) or \`npm run bench -- --quick\`; the method is in [README.md](README.md).`,
    '',
  );
  L.push(
    `This run: ${o.mode} mode, ${o.runs} run(s) per (scenario, server), ${o.duration} s measured after ${o.warmup} s of warm-up, medians. Ratios only compare figures from this run. Server pinned to CPU ${env.serverCpu}, load generator to CPU ${env.loadCpu}; a fresh server process per run.`,
    '',
  );
  if (goals.length) {
    L.push('## Goals', '');
    L.push(
      'Reported, never asserted. "met (CPU)": both runs were generator-bound, so the throughput ratio is a floor and the goal is met on server CPU per request/message instead.',
      '',
    );
    L.push('| goal | Tachyon / peer | server CPU ratio | status | note |', '|---|---:|---:|---|---|');
    for (const g of goals)
      L.push(
        `| ${md(g.label)} | ${fmtX(g.ratio)} | ${fmtX(g.cpuRatio)} | ${g.status === 'missed' ? '**missed**' : g.status} | ${md(g.note ?? '')} |`,
      );
    L.push('');
  }
  if (charts.overview) L.push(`![Tachyon / raw uWS per scenario](${charts.overview})`, '');
  for (const [group, title] of [
    ['http', 'HTTP (wrk)'],
    ['ws', 'WebSocket (bench/loadgen)'],
  ]) {
    const scenarios = o.scenarios.filter((s) => SCENARIOS[s].kind === group);
    if (!scenarios.length) continue;
    L.push(`## ${title}`, '');
    for (const s of scenarios) {
      const sc = SCENARIOS[s];
      L.push(`### ${s}`, '', `${sc.title}. Throughput in ${sc.unit}; server CPU in µs per ${sc.per}.`, '');
      const srows = rows.filter((r) => r.scenario === s);
      L.push(
        table(
          HEADER.slice(1),
          srows.map((r) => rowCells(r, { scenarioCol: false, markdown: true }).map(md)),
          new Set([1, 2, 3, 4, 5]),
        ),
      );
      L.push('');
      if (charts[s]) L.push(`![${s}: throughput relative to raw uWS](${charts[s]})`, '');
    }
  }
  L.push('## Reading the tables', '', ...LEGEND.map((l) => `- ${l}`), '');
  const unavailable = rows.filter((r) => r.status !== 'ok');
  if (unavailable.length) {
    L.push('## Not measured', '');
    const seen = new Map();
    for (const r of unavailable) {
      const key = `${r.label}|${r.reason}`;
      if (!seen.has(key)) seen.set(key, { label: r.label, status: r.status, reason: r.reason, scenarios: [] });
      seen.get(key).scenarios.push(r.scenario);
    }
    for (const v of seen.values()) L.push(`- **${v.label}** on ${v.scenarios.join(', ')}: ${v.status}: ${v.reason.replaceAll('\n', ' ')}`);
    L.push('');
  }
  L.push('## Method (summary)', '');
  L.push(
    '- Correctness first: every server is started once and checked on each scenario it implements (status, headers, byte-identical bodies, validation answering 400, pipelining; WebSocket echo, fan-out and connection setup through the load generator, which checks every message).',
    `- Fresh server process per run, pinned with \`taskset -c ${env.serverCpu}\`; the load generator runs under \`taskset -c ${env.loadCpu}\`.`,
    `- Warm-up of ${o.warmup} s before each measured run, not counted (HTTP: a separate wrk run on the fresh process; WebSocket: the loadgen's own warm-up on the same connections). Connection scenarios have no warm-up (memory per connection is measured on a fresh process).`,
    `- ${o.runs} run(s) per (scenario, server), servers interleaved run by run; medians.`,
    "- Server CPU time from `/proc/<pid>/stat` (utime + stime, all threads) over the measured window, divided by the requests / messages / connections counted in it. The load generator's own CPU is measured too; at >= 95% busy the run is flagged generator-bound.",
    `- HTTP: \`wrk -t${record.load.http.threads} -c${record.load.http.connections}\`; the pipelined scenario sends ${record.load.http.pipeline} requests per write (a wrk Lua script). WebSocket: \`bench/loadgen\` (Rust, one thread): echo with ${record.load.echo.connections} connections × ${record.load.echo.inflight} messages in flight; fan-out with ${record.load.fanout.subscribers} subscribers, the first ${record.load.fanout.senders} sending bursts of ${record.load.fanout.burst}, each sender keeping at most ${record.load.fanout.window} bursts in flight (${record.load.fanout.size}-byte payloads; raw peers forward Tachyon's delivery envelope, so every peer but Socket.IO delivers the same bytes).`,
    '',
  );
  L.push('## Versions and machine', '');
  L.push('| item | value |', '|---|---|');
  const kv = [
    ['Node.js', env.node],
    ['Bun', env.bun ?? 'unavailable'],
    ['Deno', env.deno ?? 'unavailable'],
    ...Object.entries(env.packages).map(([k, v]) => [k, v ?? 'not installed']),
    ['wrk', env.wrk],
    ['loadgen', env.loadgen],
    ['rustc', env.rustc],
    ['kernel', env.kernel],
    ['OS', env.os],
    ['CPU', `${env.cpuModel} (${env.cpus} CPUs)`],
    ['memory', `${env.memoryGiB} GiB`],
    ['open files (soft/hard)', `${env.nofile?.soft}/${env.nofile?.hard}`],
    [
      'load average at start / end',
      `${env.loadavgStart?.map((n) => n.toFixed(2)).join(' ')} / ${env.loadavgEnd?.map((n) => n.toFixed(2)).join(' ')}`,
    ],
    ['git commit', env.git ? `${env.git.commit}${env.git.packagesDirty ? ' (packages/ modified)' : ''}` : 'unknown'],
  ];
  for (const [k, v] of kv) L.push(`| ${md(k)} | ${md(v ?? '—')} |`);
  L.push('');
  return L.join('\n');
}

export function orderRows(rows) {
  return rows.sort(
    (a, b) =>
      0 ||
      Object.keys(SCENARIOS).indexOf(a.scenario) - Object.keys(SCENARIOS).indexOf(b.scenario) ||
      PEER_ORDER.indexOf(a.peer) - PEER_ORDER.indexOf(b.peer),
  );
}

export { fmtPct };
