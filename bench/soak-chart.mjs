// The chart of a soak run (bench/soak.mjs --out soak.json, docs/testing.md#soak): RSS, heap
// after gc(), open descriptors and event-loop delay p99 over time, four panels in one SVG
// (lineChart of bench/lib/game-charts.mjs), one line per worker and the primary under
// --cluster. Prints a markdown block for the "Soak" section of bench/RESULTS.md.
//
//   node bench/soak-chart.mjs soak.json [--out bench/results/soak-<date>.svg]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { lineChart } from './lib/game-charts.mjs';

const { values: opt, positionals } = parseArgs({ allowPositionals: true, options: { out: { type: 'string' } } });
const die = (why) => {
  console.error(`soak-chart: ${why}`);
  process.exit(2);
};
if (positionals.length !== 1) die('usage: node bench/soak-chart.mjs <soak.json> [--out file.svg]');
let run;
try {
  run = JSON.parse(readFileSync(positionals[0], 'utf8'));
} catch (e) {
  die(`cannot read ${positionals[0]}: ${e.message}`);
}
const samples = run?.samples;
if (!Array.isArray(samples) || samples.length < 2 || !samples.every((s) => Number.isFinite(s?.at) && Number.isFinite(s?.rss)))
  die(`${positionals[0]} is not the --out of bench/soak.mjs (it needs "samples" with "at" and "rss", two at least)`);

const MB = (b) => b / (1 << 20);
const workers = Number(run.workers) || 0;
const date = new Date(samples.at(-1).t ?? Date.now()).toISOString().slice(0, 10);
const out = opt.out ?? `bench/results/soak-${date}${workers ? `-cluster${workers}` : ''}.svg`;

/** One line per worker and one for the primary under --cluster; `whole` otherwise. */
const COLORS = ['#d9480f', '#1c7ed6', '#2f9e44', '#ae3ec9', '#f08c00', '#0c8599', '#e64980', '#5c940d'];
function perThread(key, scale = (v) => v) {
  if (!workers) return [{ label: 'server', color: COLORS[0], points: samples.map((s) => [s.at, scale(s[key])]) }];
  const lines = Array.from({ length: workers }, (_, i) => ({
    label: `worker ${i + 1}`,
    color: COLORS[i % COLORS.length],
    points: samples.map((s) => [s.at, scale(s.workers?.find((w) => w.worker === i + 1)?.[key] ?? Number.NaN)]),
  }));
  lines.push({ label: 'primary', color: '#495057', points: samples.map((s) => [s.at, scale(s.primary?.[key] ?? Number.NaN)]) });
  return lines;
}
const whole = (label, key, scale = (v) => v) => [{ label, color: COLORS[0], points: samples.map((s) => [s.at, scale(s[key])]) }];

const warm = `warm-up ${Math.round(run.warmupMin * 60)} s`;
const who = workers ? `cluster() of ${workers} workers` : 'one process';
const panels = [
  lineChart({ title: `RSS (${who}, after gc())`, xLabel: `seconds (${warm})`, yLabel: 'MB', series: whole('process', 'rss', MB) }),
  lineChart({ title: 'Heap after gc(), per thread', xLabel: 'seconds', yLabel: 'MB', series: perThread('heap', MB) }),
  lineChart({ title: 'Open file descriptors (process)', xLabel: 'seconds', yLabel: 'descriptors', series: whole('process', 'fds') }),
  lineChart({ title: 'Event-loop delay p99, per thread', xLabel: 'seconds', yLabel: 'ms', series: perThread('elP99') }),
];
// Stacked: each panel is a whole <svg> of lineChart's size, placed by its y.
const [W, H] = [760, 360];
const svg = [
  `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H * panels.length}" viewBox="0 0 ${W} ${H * panels.length}">`,
  ...panels.map((p, i) => p.replace('<svg ', `<svg y="${i * H}" `)),
  '</svg>',
].join('\n');
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, `${svg}\n`);

// The markdown block for bench/RESULTS.md (which lives in bench/: the image path is from there).
const ops = Object.entries(run.counts ?? {}).reduce((a, [k, v]) => a + (k === 'failed' || k === 'ws-message' ? 0 : v), 0);
const seconds = run.minutes * 60; // the load's length (the last sample comes after it)
const md = [
  `### Soak: ${run.minutes} minutes, ${who} (${date})`,
  '',
  `![soak: RSS, heap, descriptors, event-loop p99 over time](${path.relative('bench', out).split(path.sep).join('/')})`,
  '',
  `About ${Math.round(ops / seconds).toLocaleString('en-US')} requests and WebSocket steps per second for ${Math.round(seconds)} s` +
    ` (${(run.counts?.['ws-message'] ?? 0).toLocaleString('en-US')} WebSocket messages delivered), samples every ${run.interval} s.` +
    ` After the ${warm}, median of the first quarter of the samples → of the last quarter:`,
  '',
  '| measure | first | last | allowed growth | |',
  '|---|---:|---:|---:|---|',
  ...(run.checks ?? []).map((c) => `| ${c.name} | ${c.first} | ${c.last} | ${c.bound} | ${c.ok ? 'ok' : '**FAIL**'} |`),
  '',
  (run.problems ?? []).length === 0 ? 'Passed.' : `Failed: ${run.problems.join('; ')}.`,
];
console.log(md.join('\n'));
console.error(`soak-chart: wrote ${out}`);
