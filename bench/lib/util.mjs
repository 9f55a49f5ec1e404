// Small helpers shared by the suite's modules.
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_DIR = path.resolve(BENCH_DIR, '..');
export const RESULTS_DIR = path.join(BENCH_DIR, 'results');
export const CHARTS_DIR = path.join(RESULTS_DIR, 'charts');

export class BenchError extends Error {}

export function fail(message) {
  throw new BenchError(message);
}

export function which(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).status === 0;
}

export function sh(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

export function median(xs) {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return undefined;
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

export const fmtInt = (n) => (n === undefined || n === null || !Number.isFinite(n) ? '—' : Math.round(n).toLocaleString('en-US'));
export const fmtMs = (n) =>
  n === undefined || n === null || !Number.isFinite(n)
    ? '—'
    : n < 1
      ? `${(n * 1000).toFixed(0)} µs`
      : n < 100
        ? `${n.toFixed(2)} ms`
        : `${n.toFixed(0)} ms`;
export const fmtX = (n) =>
  n === undefined || n === null || !Number.isFinite(n)
    ? '—'
    : n >= 100
      ? `${n.toFixed(0)}×`
      : n >= 10
        ? `${n.toFixed(1)}×`
        : `${n.toFixed(2)}×`;
/** floor: 94.8% must not read as the 95% threshold. */
export const fmtPct = (n) => (n === undefined || n === null || !Number.isFinite(n) ? '?' : `${Math.floor(n * 100)}%`);
export const fmtCpu = (n) =>
  n === undefined || n === null || !Number.isFinite(n) ? '—' : n >= 100 ? n.toFixed(0) : n >= 1 ? n.toFixed(1) : n.toFixed(2);
export const fmtDuration = (s) => {
  s = Math.max(0, Math.round(s));
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
};

/** Pads a markdown/terminal table: rows of strings; `right` is a set of right-aligned columns. */
export function table(header, rows, right = new Set()) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) =>
    `| ${cells.map((c, i) => (right.has(i) ? String(c).padStart(widths[i]) : String(c).padEnd(widths[i]))).join(' | ')} |`;
  return [
    line(header),
    `|${widths.map((w, i) => (right.has(i) ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`,
    ...rows.map(line),
  ].join('\n');
}
