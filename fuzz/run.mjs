#!/usr/bin/env node
// `npm run fuzz -- [--seconds N] [--target NAME]...`: runs every fuzz target (fuzz/targets/*.mjs)
// with Jazzer.js for N seconds each (default 60), one after the other (one core each, never in
// parallel), and prints per target the executions, the coverage (libFuzzer's edge count `cov`
// and feature count `ft`) and the findings. Seeds: fuzz/corpus/<target>/ (checked in, read
// only); what the fuzzer learns goes to fuzz/.work/<target>/ (ignored), findings to
// fuzz/findings/ (ignored). Exits 1 when a target found something.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareAddon } from './addon.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(here);
/**
 * Whether a target's fuzz function is async (the rest run with --sync, which is faster). Read
 * from its source: an async target run with --sync is not awaited, and its calls pile up until
 * libFuzzer stops it out of memory (fallback-frames did, listed by hand then).
 */
const source = (name) => readFileSync(join(here, 'targets', `${name}.mjs`), 'utf8');
const isAsync = (name) => /export\s+async\s+function\s+fuzz\b/.test(source(name));
// A target whose interesting branches live in a dependency (the schema-compile target: zod's
// parsers) names it in a `// fuzz-instrument: <path>` line, so the fuzzer gets coverage from
// it too; everything else is instrumented under packages/ only.
const instrumented = (name) => ['packages/', ...[...source(name).matchAll(/^\/\/ fuzz-instrument: (\S+)$/gm)].map((m) => m[1])];

function parseArgs(argv) {
  const out = { seconds: 60, targets: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--seconds') out.seconds = Number(argv[++i]);
    else if (a === '--target') out.targets.push(...String(argv[++i]).split(','));
    else throw new Error(`unknown argument ${a} (use --seconds N, --target NAME)`);
  }
  if (!Number.isInteger(out.seconds) || out.seconds < 1) throw new Error('--seconds takes a whole number of seconds');
  return out;
}

function runTarget(name, seconds) {
  const work = join(here, '.work', name);
  const findings = join(here, 'findings');
  mkdirSync(work, { recursive: true });
  mkdirSync(findings, { recursive: true });
  // Findings of earlier runs of this target are cleared: what is listed is this run's.
  for (const f of readdirSync(findings)) if (f.startsWith(`${name}-`)) rmSync(join(findings, f));
  const dict = join(here, 'dict', `${name}.dict`);
  const args = [
    '--import',
    join(here, 'strip-types.mjs'),
    join(root, 'node_modules/@jazzer.js/core/dist/cli.js'),
    join(here, 'targets', `${name}.mjs`),
    work,
    join(here, 'corpus', name),
    ...instrumented(name).flatMap((path) => ['-i', path]),
    '--timeout',
    '3000',
    ...(isAsync(name) ? [] : ['--sync']),
    '--',
    `-max_total_time=${seconds}`,
    '-print_final_stats=1',
    `-artifact_prefix=${findings}/${name}-`,
    ...(existsSync(dict) ? [`-dict=${dict}`] : []),
  ];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    const take = (chunk) => {
      log += chunk;
      if (log.length > 1 << 20) log = log.slice(-(1 << 19));
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('close', (code) => {
      const done = [...log.matchAll(/#(\d+)\s+(?:DONE|pulse|NEW|REDUCE|INITED)\s+cov: (\d+) ft: (\d+) corp: (\d+)/g)].at(-1);
      const execs = /stat::number_of_executed_units:\s*(\d+)/.exec(log)?.[1] ?? done?.[1] ?? '?';
      const found = readdirSync(findings).filter((f) => f.startsWith(`${name}-`));
      const summary = {
        target: name,
        seconds,
        executions: Number(execs),
        cov: Number(done?.[2] ?? 0),
        ft: Number(done?.[3] ?? 0),
        corpus: Number(done?.[4] ?? 0),
        findings: found.length,
        exit: code,
      };
      if (found.length > 0 || (code !== 0 && code !== null)) {
        const tail = log
          .split('\n')
          .filter((l) => !/^#\d+/.test(l))
          .slice(-40)
          .join('\n');
        console.log(tail);
        for (const f of found) console.log(`  finding: fuzz/findings/${f}`);
      }
      resolve(summary);
    });
  });
}

const { seconds, targets } = parseArgs(process.argv.slice(2));
const all = readdirSync(join(here, 'targets'))
  .filter((f) => f.endsWith('.mjs'))
  .map((f) => f.slice(0, -4))
  .sort();
const chosen = targets.length > 0 ? targets : all;
for (const t of chosen) if (!all.includes(t)) throw new Error(`no fuzz target ${t} (have: ${all.join(', ')})`);
const problem = prepareAddon();
if (problem !== null) {
  console.error(`Jazzer.js's fuzzer does not load here: ${problem}`);
  process.exit(2);
}
const results = [];
for (const t of chosen) {
  process.stdout.write(`fuzz ${t}: ${seconds} s… `);
  const r = await runTarget(t, seconds);
  results.push(r);
  console.log(`${r.executions} executions, cov ${r.cov}, ft ${r.ft}, corpus ${r.corpus}, findings ${r.findings}`);
}
console.table(results);
process.exit(results.some((r) => r.findings > 0 || r.exit !== 0) ? 1 : 0);
