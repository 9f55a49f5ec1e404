// Clients that reset in the middle of a multipart upload: with the documented
// `await pipeline(part.stream, createWriteStream(…))`, every handler must finish and every
// file descriptor close; memory stays flat across rounds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runChild } from './child.ts';

const SCRIPT = `
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
const dir = mkdtempSync(join(tmpdir(), 'tachyon-upload-'));
let started = 0, pending = 0, finished = 0, written = 0;
const errors = {}, logged = {};
const record = (level) => (obj) => { logged[level] = (logged[level] ?? 0) + 1; };
const logger = { error: record('error'), warn: record('warn'), info: record('info'), debug: record('debug') };
const app = new App({ bodyLimit: 64 * 1024 * 1024, logger });
app.post('/upload', async (req) => {
  pending++;
  try {
    for await (const part of req.multipart()) {
      if (part.kind !== 'file') continue;
      started++;
      await pipeline(part.stream, createWriteStream(join(dir, 'f' + written++)));
    }
    return 'ok';
  } catch (err) {
    errors[err.name] = (errors[err.name] ?? 0) + 1;
    throw err;
  } finally {
    pending--;
    finished++;
  }
});
const server = await app.listen({ port: 0, host: '127.0.0.1' });
const head = (n) => 'POST /upload HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: multipart/form-data; boundary=B\\r\\nContent-Length: ' + n + '\\r\\n\\r\\n';
const partHead = '--B\\r\\nContent-Disposition: form-data; name="f"; filename="a.bin"\\r\\nContent-Type: application/octet-stream\\r\\n\\r\\n';
async function round(clients) {
  // Every client sends its head and part of a file, waits until all handlers are inside
  // pipeline(), then resets (a reset that came first would discard the unread request).
  const target = started + clients;
  const sockets = await Promise.all(Array.from({ length: clients }, () => new Promise((resolve) => {
    const s = connect(server.port, '127.0.0.1', () => {
      s.write(head(10 * 1024 * 1024) + partHead);
      s.write(Buffer.alloc(128 * 1024, 120), () => resolve(s));
    });
    s.on('error', () => resolve(s));
  })));
  for (let i = 0; i < 250 && started < target; i++) await sleep(20);
  for (const s of sockets) s.resetAndDestroy();
  for (let i = 0; i < 50 && pending > 0; i++) await sleep(20);
}
const base = await measure();
const rounds = [];
for (let r = 0; r < 3; r++) {
  await round(100);
  const m = await measure();
  rounds.push({ pending, fds: m.fds - base.fds, rss: Math.round((m.rss - base.rss) / 1048576), heap: Math.round((m.heap - base.heap) / 1048576) });
}
// The server still serves a complete upload afterwards.
const body = partHead + 'hello\\r\\n--B--\\r\\n';
const ok = await fetch('http://127.0.0.1:' + server.port + '/upload', { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=B' }, body });
console.log(JSON.stringify({ rounds, finished, after: ok.status, errors, logged }));
await server.close({ timeout: 200 });
rmSync(dir, { recursive: true, force: true });
`;

interface Result {
  rounds: { pending: number; fds: number; rss: number; heap: number }[];
  finished: number;
  after: number;
  errors: Record<string, number>;
  logged: Record<string, number>;
}

test('100 clients reset mid-file, three rounds: no pending handler, no leaked fd, flat memory', () => {
  const { rounds, finished, after, errors, logged } = runChild<Result>(SCRIPT, 60_000);
  for (const r of rounds) {
    assert.equal(r.pending, 0, `handlers still pending: ${JSON.stringify(rounds)}`);
    assert.ok(r.fds <= 5, `file descriptors leaked: ${JSON.stringify(rounds)}`);
  }
  assert.ok(rounds[2]!.heap - rounds[0]!.heap <= 8, `heap grows across rounds: ${JSON.stringify(rounds)}`);
  assert.ok(rounds[2]!.rss - rounds[0]!.rss <= 40, `RSS grows across rounds: ${JSON.stringify(rounds)}`);
  assert.equal(finished, 301);
  assert.equal(after, 200);
  // pipeline() rejects with the body's own error (not the parser's "Unexpected end of form"),
  // and a client that left is not an error-level log (no 500 stack per reset).
  assert.deepEqual(errors, { ClientAbortError: 300 });
  assert.equal(logged.error, undefined, `error logs: ${JSON.stringify(logged)}`);
  assert.equal(logged.debug, 300, `debug logs: ${JSON.stringify(logged)}`);
});
