// Rounds of 1,000 clients that accept brotli, start a live compressed stream and reset it
// mid-stream, and 50 more that reset while a whole 1 MiB body is being compressed for them
// (the one-shot path on the thread pool). The server runs in a child process
// (--expose-gc) and the clients here, so the client sockets' read buffers do not pollute
// the server's memory. After gc() each round: no compressor and no zlib handle is left,
// the JS heap is flat, and RSS reaches a plateau instead of growing round after round.
//
// The child runs with a fixed glibc mmap threshold and a capped V8 young generation. With
// the defaults, RSS after gc() climbs by tens of MB a round (175 → 366 MB over ten rounds
// of the streams alone) while the memory malloc reports in use stays at 12 MB: glibc keeps
// freed blocks in its arenas and V8 keeps the young-generation pages it grew. That
// retention, measured, is in docs/serving.md ("RSS after aborted streams"); it would hide
// a real leak, so it is turned off here.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { INDEX } from './child.ts';
import { sleep } from '../helpers.ts';

const COMPRESSION = JSON.stringify(INDEX.replace(/index\.ts$/, 'http/compression.ts'));
const ROUNDS = 10;
const CLIENTS = 1000;
/** Compressed at once (the rest goes out as identity, past the cap). */
const MAX_STREAMS = 250;
/** Requests for a whole 1 MiB body reset during its compression, a round. */
const WHOLE = 50;

/**
 * /live sends 16 KiB of text at once (brotli allocates its full state on the first chunk),
 * then 1 KiB every 100 ms until the client leaves. /whole sends 1 MiB of text, compressed in
 * one call on the thread pool; `aborted` counts clients that left during that compression.
 * /stats answers after gc().
 */
const SERVER = `
import { App } from ${JSON.stringify(INDEX)};
import { liveCompressedStreams } from ${COMPRESSION};
import { createHook } from 'node:async_hooks';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Native zlib handles, created minus destroyed (getActiveResourcesInfo() does not list them).
let zlib = 0;
const ids = new Set();
createHook({
  init(id, type) { if (type === 'ZLIB') { ids.add(id); zlib++; } },
  destroy(id) { if (ids.delete(id)) zlib--; },
}).enable();
const words = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu'.split(' ');
let seed = 1;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const text = (n) => { let s = ''; while (s.length < n) s += words[Math.floor(rnd() * 12)] + ' ' + Math.floor(rnd() * 1e6) + ' '; return s; };
const first = text(16384), next = text(1024);
const whole = text(1 << 20);
let streams = 0, errors = 0, aborted = 0;
async function* live(signal) {
  streams++;
  try {
    yield first;
    while (!signal.aborted) { await sleep(100); yield next; }
  } finally { streams--; }
}
const logger = { error: () => errors++, warn() {}, info() {}, debug() {} };
const app = new App({ compression: { maxStreams: ${MAX_STREAMS} }, logger });
app.get('/live', (req, res) => res.type('text/plain').stream(live(req.signal)));
app.get('/whole', (req, res) => {
  req.signal.addEventListener('abort', () => aborted++);
  res.type('text/plain').send(whole);
});
app.get('/stats', async () => {
  for (let i = 0; i < 4; i++) { gc(); await sleep(20); }
  const m = process.memoryUsage();
  return { rss: m.rss, heapTotal: m.heapTotal, heap: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers, live: liveCompressedStreams(), zlib, streams, errors, aborted };
});
const server = await app.listen({ port: 0, host: '127.0.0.1' });
console.log('PORT ' + server.port);
`;

interface Stats {
  rss: number;
  heapTotal: number;
  heap: number;
  external: number;
  arrayBuffers: number;
  live: number;
  zlib: number;
  streams: number;
  errors: number;
  aborted: number;
}

async function startServer(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['--expose-gc', '--max-semi-space-size=16', '--input-type=module', '-e', SERVER], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, MALLOC_MMAP_THRESHOLD_: '131072' },
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  for (let i = 0; !/PORT (\d+)/.test(out); i++) {
    if (i > 1000 || child.exitCode !== null) throw new Error(`server did not start: ${out}`);
    await sleep(10);
  }
  return { child, port: Number(/PORT (\d+)/.exec(out)![1]) };
}

/** Opens `n` br-accepting /live streams (in batches: the listen backlog); resolves once each has its first bytes. */
async function openStreams(port: number, n: number): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let b = 0; b < n; b += 250) {
    await Promise.all(
      Array.from(
        { length: Math.min(250, n - b) },
        () =>
          new Promise<void>((resolve) => {
            const s = connect(port, '127.0.0.1', () => s.write('GET /live HTTP/1.1\r\nHost: x\r\nAccept-Encoding: br\r\n\r\n'));
            sockets.push(s);
            s.once('data', () => resolve());
            s.on('data', () => {});
            s.on('error', () => resolve());
            s.once('close', () => resolve());
          }),
      ),
    );
  }
  return sockets;
}

/** Requests /whole on `n` connections and resets each a few ms later, mostly while the body is being compressed. */
async function abortWhole(port: number, n: number): Promise<void> {
  await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<void>((resolve) => {
          const s = connect(port, '127.0.0.1', () => {
            s.write('GET /whole HTTP/1.1\r\nHost: x\r\nAccept-Encoding: br\r\n\r\n');
            setTimeout(() => {
              s.resetAndDestroy();
              resolve();
            }, 5);
          });
          s.on('error', () => resolve());
        }),
    ),
  );
}

const MB = 1024 * 1024;
const mb = (n: number) => Math.round(n / MB);
const show = (s: Stats) => `rss ${mb(s.rss)} heap ${mb(s.heap)}/${mb(s.heapTotal)} ext ${mb(s.external)} live ${s.live} zlib ${s.zlib}`;

test('rounds of 1,000 reset brotli streams: compressors and zlib handles back to 0, heap flat, RSS plateaus', {
  timeout: 120_000,
}, async (t) => {
  const { child, port } = await startServer();
  t.after(() => child.kill()); // also after a timeout
  const stats = async () => (await (await fetch(`http://127.0.0.1:${port}/stats`)).json()) as Stats;
  const base = await stats();
  const rounds: Stats[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const sockets = await openStreams(port, CLIENTS);
    await abortWhole(port, WHOLE);
    await sleep(250); // a few 100 ms chunks flow while every stream is open
    for (const s of sockets) s.resetAndDestroy();
    let s = await stats();
    for (let i = 0; i < 20 && (s.streams > 0 || s.live > 0 || s.zlib > 0); i++) s = await stats();
    rounds.push(s);
    // Checked each round, so that a leak fails at once rather than at the timeout.
    const report = `base ${show(base)}; ${rounds.map(show).join('; ')}`;
    assert.equal(s.streams, 0, `stream sources still running: ${report}`);
    assert.equal(s.live, 0, `compressors still counted: ${report}`);
    assert.equal(s.zlib, 0, `zlib handles alive: ${report}`);
    assert.equal(s.errors, 0, 'nothing logged at error level');
    assert.ok(s.heap - base.heap < 8 * MB, `JS heap grows: ${report}`);
    assert.ok(s.external - base.external < 16 * MB, `external memory grows: ${report}`);
  }
  const report = `base ${show(base)}; ${rounds.map(show).join('; ')}`;
  t.diagnostic(`${rounds.at(-1)!.aborted} of ${ROUNDS * WHOLE} whole-body requests left during compression; ${report}`);
  assert.ok(rounds.at(-1)!.aborted > 0, 'no client left while its body was being compressed: the one-shot path went untested');
  // The plateau: the last five rounds' RSS within 30 MB of each other. Measured with the
  // settings above: 146 146 146 149 151 MB (and 117 130 133 143 for rounds 1-4). A leaked
  // brotli state is ≈ 1 MB: one per ten aborted compressed streams already adds 25 MB a round.
  const rss = rounds.slice(-5).map((s) => s.rss);
  assert.ok(Math.max(...rss) - Math.min(...rss) < 30 * MB, `RSS keeps growing: ${report}`);
});
