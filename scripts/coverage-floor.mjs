#!/usr/bin/env node
// The coverage floor: `npm run coverage` fails when line coverage (c8's coverage-summary.json)
// falls below the figure checked in at scripts/coverage-floor.json. The floor only goes up:
// `--raise` moves it to the measured figure (rounded down) when that is higher, never lower.
//   node scripts/coverage-floor.mjs [--raise] [--summary coverage/coverage-summary.json] [--floor scripts/coverage-floor.json]
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    raise: { type: 'boolean', default: false },
    summary: { type: 'string', default: join(root, 'coverage', 'coverage-summary.json') },
    floor: { type: 'string', default: join(root, 'scripts', 'coverage-floor.json') },
  },
});

const fail = (message) => {
  console.error(`coverage floor: ${message}`);
  process.exit(1);
};
const readJson = (path, what) => {
  if (!existsSync(path)) fail(`no ${what} at ${path}${what === 'summary' ? ' (run `npm run coverage`)' : ''}`);
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    fail(`${what} at ${path} is not JSON: ${err.message}`);
  }
};

const measured = readJson(values.summary, 'summary')?.total?.lines?.pct;
const floor = readJson(values.floor, 'floor file')?.lines;
if (typeof measured !== 'number' || !Number.isFinite(measured)) fail(`${values.summary} has no total.lines.pct`);
if (typeof floor !== 'number' || !Number.isFinite(floor) || floor < 0 || floor > 100) fail(`${values.floor} must be { "lines": <0..100> }`);

if (measured < floor) fail(`line coverage ${measured}% is below the floor of ${floor}% (${values.floor}); add tests for what you added`);
const next = Math.floor(measured);
if (values.raise && next > floor) {
  writeFileSync(values.floor, `${JSON.stringify({ lines: next }, null, 2)}\n`);
  console.log(`coverage floor: line coverage ${measured}%; floor raised from ${floor}% to ${next}%`);
} else {
  const hint = next > floor ? `; \`node scripts/coverage-floor.mjs --raise\` lifts the floor to ${next}%` : '';
  console.log(`coverage floor: line coverage ${measured}%, floor ${floor}%: ok${hint}`);
}
