#!/usr/bin/env node
// Profiles one bench server under load and prints the functions with the most self time.
//
//   node bench/profile.mjs tachyon /users/42?fields=a,b [seconds]    # a URL path, GET with wrk
//   node bench/profile.mjs tachyon http-realistic-post [seconds]     # a suite scenario (bench/lib/scenarios.mjs)
//   node bench/profile.mjs tachyon ws-fanout [seconds]               # WebSocket scenarios use bench/loadgen
//
// The server runs pinned to CPU 0 with --cpu-prof, the load generator pinned to CPU 1, after a
// 1 s warm-up. The .cpuprofile is kept for Chrome DevTools. Node peers only.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createStaticFixtures } from './static-fixtures.mjs';
import { SCENARIOS } from './lib/scenarios.mjs';
import { loadgenArgs, wrkArgs } from './lib/measure.mjs';
import { LOADGEN_BIN, ensureLoadgen, ensureWrk } from './lib/env.mjs';
import { ensureBenchInstall } from './lib/install.mjs';
import { PEERS, pkgJson } from './lib/peers.mjs';

const [name = 'tachyon', target = '/', seconds = '5'] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tachyon-prof-'));
// The static scenarios' files (/static/file-4k.txt, /static/file-64k.txt), unless STATIC_DIR is given.
const fixtures = process.env.STATIC_DIR ? undefined : createStaticFixtures();
process.on('exit', () => fixtures?.remove());
const scenario = SCENARIOS[target];
// Install what the load needs before the server starts waiting for it.
if (scenario?.kind !== 'ws') ensureWrk(console.log);
ensureBenchInstall(
  (PEERS[name]?.packages ?? []).filter((p) => !pkgJson(p)),
  console.log,
);
const server = spawn(
  'taskset',
  ['-c', '0', process.execPath, '--cpu-prof', `--cpu-prof-dir=${dir}`, join(here, 'servers', `${name}.mjs`)],
  {
    env: { ...process.env, PORT: '0', STATIC_DIR: process.env.STATIC_DIR ?? fixtures.dir },
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
const port = await new Promise((resolve) => server.stdout.on('data', (d) => /READY (\d+)/.test(String(d)) && resolve(RegExp.$1)));
const pin = (argv) => ['-c', '1', ...argv];
if (scenario?.kind === 'ws') {
  if (ensureLoadgen(console.log).error) throw new Error('bench/loadgen is not built');
  const argv = loadgenArgs(target, name, port, { duration: Number(seconds), warmup: 1, hold: 1 }, { loadgenBin: LOADGEN_BIN });
  const r = spawnSync('taskset', pin(argv), { encoding: 'utf8' });
  const rep = JSON.parse(r.stdout.trim().split('\n').pop());
  console.log(
    `${target}: ${rep.msgs_per_s ?? rep.delivered_per_s ?? rep.connect_rate} ${scenario.unit}, loadgen ${Math.round(rep.cpu_busy * 100)}% busy, ok ${rep.ok}`,
  );
} else {
  const url = `http://127.0.0.1:${port}${scenario?.path ?? target}`;
  const args = (s) => (scenario ? wrkArgs(target, url, s, false) : ['wrk', '-t1', '-c100', `-d${s}s`, url]);
  spawnSync('taskset', pin(args(1))); // warm-up
  const wrk = spawnSync('taskset', pin(args(Number(seconds))), { encoding: 'utf8' });
  const line = wrk.stdout?.split('\n').find((l) => l.startsWith('Requests/sec'));
  if (!line) {
    server.kill('SIGINT');
    throw new Error(`wrk failed: ${wrk.error?.message ?? wrk.stderr}`);
  }
  console.log(line);
}
server.kill('SIGINT');
await new Promise((r) => server.on('exit', r));

const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));
const self = new Map();
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const dt = new Map();
profile.samples.forEach((id, i) => {
  dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
let total = 0;
for (const [id, t] of dt) {
  const n = byId.get(id);
  const f = n.callFrame;
  const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + t);
  total += t;
}
const idle = [...self].filter(([k]) => k.startsWith('(idle)')).reduce((a, [, t]) => a + t, 0);
console.log(`profile: ${join(dir, file)}  (busy ${(100 * (1 - idle / total)).toFixed(1)}%)`);
for (const [k, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30))
  console.log(`${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`);
