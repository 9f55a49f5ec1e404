#!/usr/bin/env node
// Instructions per keystroke of a game peer (bench/servers/game-<peer>.mjs) under Valgrind's
// callgrind: a small fixed number of players racing (bench/loadgen game), a window counted
// with callgrind_control after a long warm-up, divided by the keystrokes the load generator
// sent in that window. For a change to a game server's path (binary events, batches, the
// rules) where the capacity ramp's run-to-run spread (±10%) hides a few per cent.
//
//   node bench/game-instructions.mjs [--tree ../other-worktree] [--peer tachyon] [--players 40]
//        [--seconds 15] [--warmup 50] [--tick 100 --compact] [--annotate 40]
//
// With --joins, instructions per join instead: players keep arriving at --rate a second
// (default 4) through the warm-up and the window, and none of them types or pings, so the
// window is the join path (matchmake over HTTP, the upgrade, the subscribe, `pvp:join` and
// its lobby update to the room) plus the rooms' fixed costs, divided by the players that
// connected in it. --players is then ignored: arrivals never stop before the window ends.
//
// What it counts: every user-space instruction of the server in the window, the per-second
// fixed costs (timers, the game's tick, GC) included, so compare counts of one player count
// only. Keep the load low: under Valgrind the server runs about 50× slower, and a saturated
// one handles fewer keystrokes per wakeup, which moves the count (40 players at a keystroke
// per 200 ms is about 5% of a core here). V8 is single-threaded with fixed seeds, as in
// bench/instructions.mjs, but a window can still catch a late optimizing compile (its
// compiler frames show in --annotate): warm up 50 s or more, and alternate the trees.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { annotate } from './lib/callgrind-annotate.mjs';
import { ensureDebianTool, ensureLoadgen, LOAD_CPU, LOADGEN_BIN, SERVER_CPU } from './lib/env.mjs';
import { REPO_DIR } from './lib/util.mjs';

const { values: o } = parseArgs({
  options: {
    tree: { type: 'string', default: REPO_DIR },
    peer: { type: 'string', default: 'tachyon' },
    players: { type: 'string', default: '40' },
    seconds: { type: 'string', default: '15' },
    warmup: { type: 'string', default: '50' },
    tick: { type: 'string', default: '0' },
    compact: { type: 'boolean', default: false },
    joins: { type: 'boolean', default: false },
    rate: { type: 'string' },
    annotate: { type: 'string' },
  },
});
const tree = resolve(o.tree);
const seconds = Number(o.seconds);
const warmup = Number(o.warmup);
const rate = Number(o.rate ?? (o.joins ? 4 : 50));
// In --joins mode players arrive until the end: enough for the whole run at `rate`.
const players = o.joins ? Math.ceil(rate * (warmup + seconds + 20)) : Number(o.players);
if (![seconds, warmup, rate, players].every((n) => Number.isFinite(n) && n > 0)) {
  console.error('--seconds, --warmup, --rate and --players must be positive numbers');
  process.exit(2);
}
const built = ensureLoadgen(console.error);
if (built.error) {
  console.error(built.error);
  process.exit(2);
}
ensureDebianTool('valgrind', 'valgrind', console.error);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const dir = mkdtempSync(join(os.tmpdir(), 'tachyon-game-callgrind-'));
const port = 30000 + Math.floor(Math.random() * 20000);
const args = ['-c', String(SERVER_CPU), 'valgrind', '--tool=callgrind', '--instr-atstart=no', '--smc-check=all-non-file'];
args.push(`--callgrind-out-file=${join(dir, 'cg.out')}`, process.execPath, '--single-threaded', '--hash-seed=1', '--random-seed=1');
args.push('--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${join(dir, 'v8.log')}`);
args.push(join(tree, 'bench', 'servers', `game-${o.peer}.mjs`));
const env = { ...process.env, PORT: String(port), GAME_WAIT_SECONDS: '2' };
if (o.tick !== '0') env.GAME_TICK_MS = o.tick;
// taskset execs valgrind: the child's pid is valgrind's, which callgrind_control addresses.
const server = spawn('taskset', args, { cwd: tree, env, stdio: ['ignore', 'pipe', 'pipe'] });
let out = '';
let err = '';
server.stdout.on('data', (d) => (out += d));
server.stderr.on('data', (d) => (err = (err + d).slice(-3000)));
try {
  for (let i = 0; i < 1800 && !/READY/.test(out); i++) await sleep(100);
  if (!/READY/.test(out)) throw new Error(`game-${o.peer}: no READY under valgrind in 180 s\n${err}`);
  // Arrivals, the last room's wait (2 s) and countdown (3 s), then the warm-up and the window;
  // in --joins mode the warm-up starts with the first arrivals.
  const racing = o.joins ? 2 : Math.ceil(players / rate) + 8;
  const duration = racing + warmup + seconds + 5;
  const started = Date.now();
  const lgArgs = ['-c', String(LOAD_CPU), LOADGEN_BIN, 'game', '--url', `ws://127.0.0.1:${port}/ws`, '--protocol', 'tachyon'];
  lgArgs.push(
    '--rate',
    String(rate),
    '--max-players',
    String(players),
    '--duration',
    String(duration),
    '--quiet',
    '--setup-timeout',
    '120',
  );
  if (o.compact) lgArgs.push('--compact');
  // Nobody types or pings (a keystroke and a ping every 1,000 s): only the joins are counted.
  if (o.joins) lgArgs.push('--keystroke-ms', '1000000', '--ping-ms', '1000000');
  const loadgen = spawn('taskset', lgArgs, { stdio: ['ignore', 'pipe', 'inherit'] });
  let report = '';
  loadgen.stdout.on('data', (d) => (report += d));
  const done = new Promise((r) => loadgen.on('close', r));
  await sleep((racing + warmup) * 1000);
  execFileSync('callgrind_control', ['-i', 'on', String(server.pid)]);
  const on = Date.now();
  await sleep(seconds * 1000);
  execFileSync('callgrind_control', ['-i', 'off', String(server.pid)]);
  const off = Date.now();
  execFileSync('callgrind_control', ['-d', String(server.pid)]);
  await done;
  const dump = join(dir, 'cg.out.1');
  for (let i = 0; i < 300 && !(existsSync(dump) && /^totals:/m.test(readFileSync(dump, 'latin1'))); i++) await sleep(100);
  const instructions = Number(/^totals: (\d+)/m.exec(readFileSync(dump, 'latin1'))[1]);
  const r = JSON.parse(report.trim().split('\n').pop());
  // Keystrokes sent, or players connected, in [on, off]: each timeline second weighted by
  // its overlap with the window (a second's joins: its `players` less the second before's).
  let keystrokes = 0;
  let joins = 0;
  let before = 0;
  for (const row of r.timeline) {
    const a = started + (row.t - 1) * 1000;
    const b = started + row.t * 1000;
    const overlap = Math.max(0, Math.min(b, off) - Math.max(a, on)) / 1000;
    keystrokes += row.keystrokes * overlap;
    joins += (row.players - before) * overlap;
    before = row.players;
  }
  const counted = o.joins ? joins : keystrokes;
  const last = r.timeline.at(-3);
  const result = { tree, peer: o.peer, tick: Number(o.tick), compact: o.compact, window_s: (off - on) / 1000 };
  if (o.joins) Object.assign(result, { rate, joins: Math.round(joins), instructions, per_join: Math.round(instructions / joins) });
  else
    Object.assign(result, {
      players,
      keystrokes: Math.round(keystrokes),
      instructions,
      per_keystroke: Math.round(instructions / keystrokes),
      key_p95_ms: last?.key?.p95,
    });
  console.log(JSON.stringify({ ...result, errors: r.errors }));
  if (o.annotate !== undefined)
    for (const line of annotate(dump, `/tmp/perf-${server.pid}.map`, counted, Number(o.annotate))) console.log(line);
} finally {
  server.kill('SIGKILL');
}
