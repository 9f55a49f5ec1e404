// Clients that reset in the middle of a request body (every way of reading one) or in the
// middle of a streamed response they stopped reading. Measured in a child process after gc():
// every handler finishes, no file descriptor or stream source is left open, memory is flat
// across rounds, and nothing is logged at error level.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runChild } from './child.ts';

const SCRIPT = `
import { Readable } from 'node:stream';
import { z } from 'zod';
let started = 0, pending = 0, finished = 0, sources = 0;
const errors = {}, logged = {};
const record = (level) => () => { logged[level] = (logged[level] ?? 0) + 1; };
const logger = { error: record('error'), warn: record('warn'), info: record('info'), debug: record('debug') };
const app = new App({ bodyLimit: 16 * 1024 * 1024, logger });
const readers = {
  json: (req) => req.json(),
  bytes: (req) => req.bytes(),
  iterate: async (req) => { for await (const chunk of req) void chunk; },
  form: (req) => req.formData(),
};
for (const [name, read] of Object.entries(readers)) {
  app.post('/' + name, async (req) => {
    started++;
    pending++;
    try {
      await read(req);
      return 'ok';
    } catch (err) {
      errors[err.name] = (errors[err.name] ?? 0) + 1;
      throw err;
    } finally {
      pending--;
      finished++;
    }
  });
}
// A body schema reads the body before the handler: count it through middleware.
app.use('/schema', async (req, res, next) => {
  started++;
  pending++;
  try { return await next(); } finally { pending--; finished++; }
});
app.post('/schema', { body: z.object({ a: z.string() }) }, () => 'ok');
// An endless streamed response: the client stops reading, then resets.
app.get('/stream', (req, res) => {
  started++;
  sources++;
  const chunk = Buffer.alloc(64 * 1024, 97);
  const source = new Readable({ read() { this.push(chunk); } });
  source.on('close', () => sources--);
  return res.stream(source);
});
const server = await app.listen({ port: 0, host: '127.0.0.1' });
const heads = {
  json: 'POST /json HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/json\\r\\nContent-Length: 8000000\\r\\n\\r\\n{"a":"',
  bytes: 'POST /bytes HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 8000000\\r\\n\\r\\n',
  iterate: 'POST /iterate HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 8000000\\r\\n\\r\\n',
  form: 'POST /form HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: multipart/form-data; boundary=B\\r\\nContent-Length: 8000000\\r\\n\\r\\n--B\\r\\n',
  schema: 'POST /schema HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/json\\r\\nContent-Length: 8000000\\r\\n\\r\\n{"a":"',
  chunked: 'POST /bytes HTTP/1.1\\r\\nHost: x\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n20000\\r\\n',
  stream: 'GET /stream HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n',
};
const kinds = Object.keys(heads);
async function round(clients) {
  // Each client sends a head and part of its body (or asks for the stream and reads nothing),
  // waits until every handler has started, then resets.
  const target = started + clients;
  const sockets = await Promise.all(Array.from({ length: clients }, (_, i) => new Promise((resolve) => {
    const kind = kinds[i % kinds.length];
    const s = connect(server.port, '127.0.0.1', () => {
      if (kind === 'stream') s.pause();
      s.write(heads[kind]);
      if (kind === 'stream') resolve(s);
      else s.write(Buffer.alloc(100 * 1024, 97), () => resolve(s));
    });
    s.on('error', () => resolve(s));
  })));
  for (let i = 0; i < 250 && started < target; i++) await sleep(20);
  for (const s of sockets) s.resetAndDestroy();
  for (let i = 0; i < 100 && (pending > 0 || sources > 0); i++) await sleep(20);
}
const base = await measure();
const rounds = [];
for (let r = 0; r < 3; r++) {
  await round(140);
  const m = await measure();
  rounds.push({ pending, sources, fds: m.fds - base.fds, rss: Math.round((m.rss - base.rss) / 1048576), heap: Math.round((m.heap - base.heap) / 1048576) });
}
const startedByClients = started;
const ok = await fetch('http://127.0.0.1:' + server.port + '/json', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":"b"}' });
console.log(JSON.stringify({ rounds, started: startedByClients, finished, after: ok.status, errors, logged }));
await server.close({ timeout: 200 });
`;

interface Result {
  rounds: { pending: number; sources: number; fds: number; rss: number; heap: number }[];
  started: number;
  finished: number;
  after: number;
  errors: Record<string, number>;
  logged: Record<string, number>;
}

test('clients reset mid-body (json, bytes, iteration, formData, schema, chunked) and mid-stream: everything settles, nothing leaks', () => {
  const r = runChild<Result>(SCRIPT, 60_000);
  const show = JSON.stringify(r);
  for (const round of r.rounds) {
    assert.equal(round.pending, 0, `handlers still pending: ${show}`);
    assert.equal(round.sources, 0, `stream sources left open: ${show}`);
    assert.ok(round.fds <= 5, `file descriptors leaked: ${show}`);
  }
  assert.equal(r.started, 420, show);
  assert.ok(r.rounds[2]!.heap - r.rounds[0]!.heap <= 8, `heap grows across rounds: ${show}`);
  assert.ok(r.rounds[2]!.rss - r.rounds[0]!.rss <= 40, `RSS grows across rounds: ${show}`);
  assert.equal(r.after, 200);
  // Every body read rejects with ClientAbortError; none is an error-level log.
  assert.deepEqual(Object.keys(r.errors), ['ClientAbortError'], show);
  assert.equal(r.logged.error, undefined, show);
});
