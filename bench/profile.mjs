#!/usr/bin/env node
// Profiles one bench server under load: `node bench/profile.mjs tachyon /users/42?fields=a,b [seconds]`
// (static: `node bench/profile.mjs tachyon /static/file-4k.txt`).
// Runs the server pinned to CPU 0 with --cpu-prof, wrk pinned to CPU 1, then prints the
// functions with the most self time. The .cpuprofile is kept for Chrome DevTools.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createStaticFixtures } from './static-fixtures.mjs';

const [name = 'tachyon', path = '/', seconds = '5'] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tachyon-prof-'));
// The static scenarios' files (/static/file-4k.txt, /static/file-64k.txt), unless STATIC_DIR is given.
const fixtures = process.env.STATIC_DIR ? undefined : createStaticFixtures();
process.on('exit', () => fixtures?.remove());
const server = spawn('taskset', ['-c', '0', process.execPath, '--cpu-prof', `--cpu-prof-dir=${dir}`, join(here, 'servers', `${name}.mjs`)], {
  env: { ...process.env, PORT: '0', STATIC_DIR: process.env.STATIC_DIR ?? fixtures.dir },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const port = await new Promise((resolve) => server.stdout.on('data', (d) => /READY (\d+)/.test(String(d)) && resolve(RegExp.$1)));
spawnSync('taskset', ['-c', '1', 'wrk', '-t1', '-c100', '-d1s', `http://127.0.0.1:${port}${path}`]); // warm-up
const wrk = spawnSync('taskset', ['-c', '1', 'wrk', '-t1', '-c100', `-d${seconds}s`, `http://127.0.0.1:${port}${path}`], { encoding: 'utf8' });
console.log(wrk.stdout.split('\n').find((l) => l.startsWith('Requests/sec')));
server.kill('SIGINT');
await new Promise((r) => server.on('exit', r));

const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'));
const self = new Map();
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const dt = new Map();
profile.samples.forEach((id, i) => dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
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
for (const [k, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`);
