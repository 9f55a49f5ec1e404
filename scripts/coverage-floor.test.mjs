// The coverage floor check: passes at or above the floor, fails below it with a clear message,
// raises but never lowers the floor, and refuses a missing or malformed file.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const cli = join(dirname(fileURLToPath(import.meta.url)), 'coverage-floor.mjs');
const work = mkdtempSync(join(tmpdir(), 'coverage-floor-'));
after(() => rmSync(work, { recursive: true, force: true }));

const summary = join(work, 'summary.json');
const floor = join(work, 'floor.json');
const check = (measured, floorValue, ...args) => {
  writeFileSync(summary, JSON.stringify({ total: { lines: { pct: measured } } }));
  writeFileSync(floor, JSON.stringify({ lines: floorValue }));
  return spawnSync(process.execPath, [cli, '--summary', summary, '--floor', floor, ...args], { encoding: 'utf8' });
};
const floorNow = () => JSON.parse(readFileSync(floor, 'utf8')).lines;

test('at or above the floor passes; above it, the output says how to raise it', () => {
  assert.equal(check(80, 80).status, 0);
  const above = check(83.7, 80);
  assert.equal(above.status, 0);
  assert.match(above.stdout, /83\.7%, floor 80%: ok; .*--raise.* to 83%/);
  assert.equal(floorNow(), 80, 'a check alone never writes the floor');
});

test('below the floor fails, naming both figures', () => {
  const r = check(79.99, 80);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /line coverage 79\.99% is below the floor of 80%/);
});

test('--raise moves the floor up to the measured figure rounded down, never down', () => {
  assert.equal(check(83.7, 80, '--raise').status, 0);
  assert.equal(floorNow(), 83);
  assert.equal(check(80.5, 80, '--raise').status, 0);
  assert.equal(floorNow(), 80, 'same whole figure: unchanged');
  assert.equal(check(70, 80, '--raise').status, 1);
  assert.equal(floorNow(), 80, 'below: fails and leaves the floor');
});

test('a missing or malformed summary or floor file is a clear error', () => {
  const missing = spawnSync(process.execPath, [cli, '--summary', join(work, 'none.json'), '--floor', floor], { encoding: 'utf8' });
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /no summary at .*none\.json \(run `npm run coverage`\)/);
  writeFileSync(summary, '{not json');
  const garbled = spawnSync(process.execPath, [cli, '--summary', summary, '--floor', floor], { encoding: 'utf8' });
  assert.equal(garbled.status, 1);
  assert.match(garbled.stderr, /summary at .* is not JSON/);
  assert.match(check('84', 80).stderr, /has no total\.lines\.pct/);
  assert.match(check(84, 140).stderr, /must be \{ "lines": <0\.\.100> \}/);
  assert.match(check(84, 'high').stderr, /must be \{ "lines": <0\.\.100> \}/);
});
