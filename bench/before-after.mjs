#!/usr/bin/env node
// Before/after: the same scenario and peers measured in two trees (an older commit's worktree,
// built, and this one), round after round, each server in a fresh process (bench/run.mjs does
// that), and every figure a ratio to raw uWS *in the same invocation*: on a machine whose
// speed drifts between invocations (a busy VM, a borrowed one), only those ratios compare.
//
//   node bench/before-after.mjs --old ../old-worktree [--only http-realistic-get]
//        [--peers uws,tachyon,tachyon-access-log] [--rounds 3] [--runs 3] [--duration 2] [--warmup 1]
//
// Prints, per peer, the median over every run of (server CPU per request ÷ raw uWS's in the
// same run of the same invocation), before and after, and the change. A peer the old tree
// does not have (bench/servers/<peer>.mjs) is measured in the new tree only.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values: o } = parseArgs({
  options: {
    old: { type: 'string' },
    only: { type: 'string', default: 'http-realistic-get' },
    peers: { type: 'string', default: 'uws,tachyon' },
    rounds: { type: 'string', default: '3' },
    runs: { type: 'string', default: '3' },
    duration: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '1' },
  },
});
if (o.old === undefined) {
  console.error('usage: node bench/before-after.mjs --old <worktree of the older commit, built> [options]');
  process.exit(2);
}
const trees = { before: resolve(o.old), after: resolve(dirname(fileURLToPath(import.meta.url)), '..') };
const wanted = o.peers.split(',');
if (wanted[0] !== 'uws') wanted.unshift('uws'); // the yardstick, first in every invocation

/** ratios[tree][peer] = every per-run ratio to raw uWS. */
const ratios = { before: {}, after: {} };
for (let round = 1; round <= Number(o.rounds); round++) {
  for (const [tree, dir] of Object.entries(trees)) {
    const peers = wanted.filter((p) => existsSync(join(dir, 'bench', 'servers', `${p}.mjs`)));
    const args = ['bench/run.mjs', '--only', o.only, '--peers', peers.join(','), '--runs', o.runs];
    args.push('--duration', o.duration, '--warmup', o.warmup, '--no-write-results');
    console.log(`round ${round}/${o.rounds}, ${tree} (${dir}): node ${args.join(' ')}`);
    const r = spawnSync(process.execPath, args, { cwd: dir, encoding: 'utf8' });
    const file = /Raw figures: (\S+\.json)/.exec(r.stdout ?? '')?.[1];
    if (r.status !== 0 || file === undefined) {
      console.error(r.stdout, r.stderr);
      throw new Error(`bench/run.mjs failed in ${dir} (exit ${r.status})`);
    }
    collect(ratios[tree], JSON.parse(readFileSync(join(dir, file), 'utf8')).runs);
  }
}

/** Pairs each run with raw uWS's run of the same scenario and index in the same invocation. */
function collect(into, runs) {
  const yardstick = new Map();
  for (const run of runs) if (run.peer === 'uws') yardstick.set(`${run.scenario}/${run.run}`, run.cpuUsPer);
  for (const run of runs) {
    const base = yardstick.get(`${run.scenario}/${run.run}`);
    if (run.peer === 'uws' || !(base > 0) || !(run.cpuUsPer > 0)) continue;
    (into[run.peer] ??= []).push(run.cpuUsPer / base);
  }
}

function median(xs) {
  if (xs === undefined || xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

const fmt = (x) => (x === undefined ? '—' : `${x.toFixed(3)}×`);
console.log(`\n${o.only}, server CPU per request ÷ raw uWS in the same run (median of per-run ratios, n runs)\n`);
console.log('| server | before | after | change |');
console.log('|---|---:|---:|---:|');
for (const peer of wanted.slice(1)) {
  const b = median(ratios.before[peer]);
  const a = median(ratios.after[peer]);
  const change = a !== undefined && b !== undefined ? `${((a / b - 1) * 100).toFixed(1)}%` : '—';
  const n = (xs) => (xs === undefined ? '' : ` (n=${xs.length})`);
  console.log(`| ${peer} | ${fmt(b)}${n(ratios.before[peer])} | ${fmt(a)}${n(ratios.after[peer])} | ${change} |`);
}
