// A flood of bad binary frames on a route with binary events (docs/protocol.md, "Binary
// events"): invalid UTF-8, a decode that throws, a payload its schema refuses, an undeclared
// code, empty frames, mixed with good ones. Measured in a child process after gc(): each bad
// frame gets its error frame, each good one runs its handler once, the log stays throttled,
// and memory and file descriptors are flat across rounds of sockets that flood and leave.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runChild } from './child.ts';

/** Per round: SOCKETS sockets, each sending FRAMES bad frames and one good one per five bad. */
const SOCKETS = 10;
const FRAMES = 400;

const SCRIPT = `
import { z } from 'zod';
const logged = {};
const record = (level) => () => { logged[level] = (logged[level] ?? 0) + 1; };
const logger = { error: record('error'), warn: record('warn'), info: record('info'), debug: record('debug') };
let handled = 0;
const app = new App({ logger });
app.ws('/live', {
  events: {
    keys: { binary: 1, schema: z.string().max(16), handler: () => { handled++; } },
    move: {
      binary: { code: 2, decode: (bytes) => { if (bytes[0] === 0xff) throw new Error('bad move'); return bytes.length; } },
      handler: () => { handled++; },
    },
  },
});
const server = await app.listen({ port: 0, host: '127.0.0.1' });
const url = 'ws://127.0.0.1:' + server.port + '/live';

const BAD = [
  Uint8Array.of(1, 0xff, 0xfe, 0xfd),        // invalid UTF-8: BAD_FRAME
  Uint8Array.of(2, 0xff, 1, 2),              // decode throws: BAD_FRAME
  Uint8Array.of(1, ...Buffer.from('x'.repeat(40))), // schema refuses: VALIDATION
  Uint8Array.of(9, 1, 2, 3),                 // undeclared code: BAD_FRAME
  new Uint8Array(0),                          // empty: BAD_FRAME
];
const GOOD = [Uint8Array.of(1, ...Buffer.from('abc')), Uint8Array.of(2, 1, 2, 3)];
const SOCKETS = ${SOCKETS}, FRAMES = ${FRAMES};

/** One socket: the flood, then a JSON event with a ref, answered after every frame before it. */
function flood() {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const codes = {};
    ws.onerror = () => reject(new Error('socket failed'));
    ws.onopen = () => {
      for (let i = 0; i < FRAMES; i++) {
        ws.send(BAD[i % BAD.length]);
        if (i % 5 === 0) ws.send(GOOD[(i / 5) % GOOD.length]);
      }
      ws.send(JSON.stringify({ type: 'event', event: 'keys', data: 'done', ref: 1 }));
    };
    ws.onmessage = (e) => {
      const m = JSON.parse(String(e.data));
      if (m.type === 'error') codes[m.code] = (codes[m.code] ?? 0) + 1;
      else if (m.type === 'reply' && m.ref === 1) {
        ws.onclose = () => resolve(codes);
        ws.close();
      }
    };
  });
}

async function round() {
  const all = await Promise.all(Array.from({ length: SOCKETS }, flood));
  const codes = {};
  for (const c of all) for (const [k, n] of Object.entries(c)) codes[k] = (codes[k] ?? 0) + n;
  for (let i = 0; i < 100 && app.connections > 0; i++) await sleep(20);
  return codes;
}

const rounds = [];
await round(); // warm-up: code compiled, buffers grown
const first = await measure();
for (let i = 0; i < 4; i++) rounds.push(await round());
const last = await measure();
const connections = app.connections;
await app.close();
console.log(JSON.stringify({ first, last, rounds, handled, logged, connections }));
`;

test('a flood of bad binary frames: each answered, good ones handled once, the log throttled, memory and descriptors flat', (t) => {
  const r = runChild<{
    first: { fds: number; rss: number; heap: number };
    last: { fds: number; rss: number; heap: number };
    rounds: Record<string, number>[];
    handled: number;
    logged: Record<string, number>;
    connections: number;
  }>(SCRIPT, 120_000);
  const mb = (n: number) => (n / 2 ** 20).toFixed(1);
  t.diagnostic(
    `heap ${mb(r.first.heap)} -> ${mb(r.last.heap)} MiB, rss ${mb(r.first.rss)} -> ${mb(r.last.rss)} MiB, fds ${r.first.fds} -> ${r.last.fds}, warnings ${r.logged.warn ?? 0}, handled ${r.handled}`,
  );
  for (const codes of r.rounds)
    assert.deepEqual(codes, { BAD_FRAME: (FRAMES * 4 * SOCKETS) / 5, VALIDATION: (FRAMES * SOCKETS) / 5 }, 'one error frame per bad frame');
  // FRAMES / 5 good frames per socket and the closing JSON event, in every round and the warm-up.
  assert.equal(r.handled, 5 * SOCKETS * (FRAMES / 5 + 1), 'every good frame ran its handler once');
  assert.equal(r.connections, 0, 'every socket gone');
  const MiB = 2 ** 20;
  assert.ok(r.last.heap - r.first.heap < 4 * MiB, `heap after gc() flat: +${((r.last.heap - r.first.heap) / MiB).toFixed(1)} MiB`);
  assert.ok(r.last.rss - r.first.rss < 40 * MiB, `rss flat: +${((r.last.rss - r.first.rss) / MiB).toFixed(1)} MiB`);
  assert.ok(r.last.fds <= r.first.fds + 2, `descriptors flat: ${r.first.fds} -> ${r.last.fds}`);
  // 20,000 bad frames over five rounds (warm-up included): throttled to a few lines, never an error-level one.
  assert.equal(r.logged.error ?? 0, 0, 'bad input is not an error of the server');
  assert.ok((r.logged.warn ?? 0) < 200, `warnings throttled: ${r.logged.warn}`);
});
