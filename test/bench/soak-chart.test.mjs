// bench/soak-chart.mjs (docs/testing.md#soak): a soak run's JSON, one process and cluster(),
// becomes an SVG of four panels and a markdown block; what is not a soak run's JSON is refused.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const script = new URL('../../bench/soak-chart.mjs', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'soak-chart-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const MB = 1 << 20;
/** The shape bench/soak.mjs --out writes (its fields, not its numbers). */
function soakJson(workers) {
  const samples = Array.from({ length: 12 }, (_, i) => ({
    t: Date.UTC(2026, 10, 27, 5, 0, i * 5),
    at: 5 * (i + 1),
    rss: (150 + i) * MB,
    heap: 20 * MB,
    fds: 50,
    handles: 10,
    elP99: 8 + (i % 3),
    elMax: 40,
    ...(workers && {
      workers: Array.from({ length: workers }, (_, w) => ({ worker: w + 1, heap: (10 + w) * MB, handles: 5, elP99: 7 + w, elMax: 30 })),
      primary: { heap: 11 * MB, handles: 4, elP99: 3, elMax: 10 },
    }),
  }));
  const checks = [
    { name: 'RSS (MB)', first: '152.0', last: '160.0', bound: '+24.0', ok: true },
    { name: 'worker 2 heap (MB)', first: '11.0', last: '19.0', bound: '+4.0', ok: false },
  ];
  const problems = ['worker 2 heap (MB) grew past its bound: 11.0 -> 19.0 (+4.0)'];
  return { minutes: 1, warmupMin: 0.25, interval: 5, workers, samples, counts: { 'get-json': 600, 'ws-message': 9000 }, checks, problems };
}

test('a cluster run: four panels, one line per worker and the primary, the verdict table', async () => {
  const json = join(dir, 'cluster.json');
  const svg = join(dir, 'cluster.svg');
  writeFileSync(json, JSON.stringify(soakJson(3)));
  const { stdout } = await run(process.execPath, [script, json, '--out', svg]);
  const drawn = readFileSync(svg, 'utf8');
  assert.equal(drawn.match(/<svg /g).length, 5, 'an outer SVG and four panels');
  for (const title of ['RSS', 'Heap after gc()', 'Open file descriptors', 'Event-loop delay p99']) assert.match(drawn, new RegExp(title));
  for (const who of ['worker 1', 'worker 2', 'worker 3', 'primary'])
    assert.equal(drawn.split(`>${who}<`).length - 1, 2, `${who} in both per-thread panels`);
  // 2 whole-process lines + 2 panels × (3 workers + primary).
  assert.equal(drawn.match(/<polyline /g).length, 10);
  assert.match(stdout, /^### Soak: 1 minutes, cluster\(\) of 3 workers \(2026-11-27\)/);
  assert.match(stdout, /\| worker 2 heap \(MB\) \| 11\.0 \| 19\.0 \| \+4\.0 \| \*\*FAIL\*\* \|/);
  assert.match(stdout, /Failed: worker 2 heap/);
  assert.match(stdout, /About 10 requests and WebSocket steps per second for 60 s \(9,000 WebSocket messages delivered\)/);
});

test('a one-process run: one line per panel, the default file name from the date', async () => {
  const json = join(dir, 'one.json');
  const run1 = soakJson(0);
  run1.problems = [];
  writeFileSync(json, JSON.stringify(run1));
  const { stdout, stderr } = await run(process.execPath, [script, json], { cwd: dir });
  assert.match(stderr, /wrote bench\/results\/soak-2026-11-27\.svg/);
  const drawn = readFileSync(join(dir, 'bench/results/soak-2026-11-27.svg'), 'utf8');
  assert.equal(drawn.match(/<polyline /g).length, 4);
  assert.match(stdout, /!\[soak: [^\]]*\]\(results\/soak-2026-11-27\.svg\)/);
  assert.match(stdout, /\nPassed\.$/m);
});

test('what is not a soak run: a clear error, exit code 2, no file written', async () => {
  const cases = [
    [[join(dir, 'missing.json')], /cannot read .*missing\.json/],
    [['--out', join(dir, 'x.svg')], /usage:/],
  ];
  for (const [body, name] of [
    ['{ not json', 'broken.json'],
    ['{"samples":[]}', 'empty.json'],
    ['{"samples":[{"at":1},{"at":2}]}', 'norss.json'],
  ]) {
    writeFileSync(join(dir, name), body);
    cases.push([
      [join(dir, name), '--out', join(dir, 'x.svg')],
      name === 'broken.json' ? /cannot read/ : /is not the --out of bench\/soak\.mjs/,
    ]);
  }
  for (const [args, message] of cases) {
    const e = await run(process.execPath, [script, ...args]).then(
      () => assert.fail(`accepted ${args}`),
      (e) => e,
    );
    assert.equal(e.code, 2, String(args));
    assert.match(e.stderr, message);
  }
  assert.throws(() => readFileSync(join(dir, 'x.svg')), { code: 'ENOENT' });
});
