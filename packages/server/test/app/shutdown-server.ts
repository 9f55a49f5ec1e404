// The server of shutdown-kinds.test.ts, in its own process (run with --expose-gc): one route
// per kind of answer, so a SIGTERM or a close() can land while each is in flight.
// argv[2]: 'signal' (listen with signals: true; the parent sends SIGTERM) or 'close' (the
// parent writes "close\n" on stdin; server.close() runs and the process must then exit by
// itself, with nothing left holding the event loop). argv[3]: a directory for the files.
// Prints `PORT n`, then after close `AFTER {json}`: descriptors, heap and what ran.
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from '../../src/index.ts';

const [mode, dir] = [process.argv[2], process.argv[3]!];
const TIMEOUT = 3000;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const enc = new TextEncoder();

writeFileSync(join(dir, 'small.txt'), 'small file\n');
writeFileSync(join(dir, 'big.bin'), Buffer.alloc(8 << 20, 7)); // over memoryThreshold: streamed from disk

const app = new App({ compression: { threshold: 1 } });
app.get('/json', () => ({ ok: true }));
app.get('/text', () => 'ok');
app.get('/bytes', () => new Uint8Array([1, 2, 3]));
app.get('/compressed', () => ({ rows: Array.from({ length: 500 }, (_, i) => ({ i, name: 'row ' + i })) }));
app.get('/slow', async () => {
  await sleep(800);
  return 'slow done';
});
app.get('/forever', () => new Promise(() => {}));
// An endless stream (default shutdown: 'end') and a finite one ('finish').
app.get('/stream-end', async (req, res) => {
  await res.stream(
    (async function* () {
      while (!req.signal.aborted) {
        yield 'tick\n';
        await sleep(50);
      }
    })(),
  );
});
app.get('/stream-finish', { compress: false }, async (_req, res) => {
  await res.stream(
    (async function* () {
      for (let i = 0; i < 4; i++) {
        yield `part${i};`;
        await sleep(250);
      }
    })(),
    { shutdown: 'finish' },
  );
});
// The same finite stream, brotli-compressed on the way out.
app.get('/stream-br', async (_req, res) => {
  await res.type('text/plain').stream(
    (async function* () {
      for (let i = 0; i < 4; i++) {
        yield `part${i};`.repeat(200);
        await sleep(250);
      }
    })(),
    { shutdown: 'finish' },
  );
});
app.get('/sse', (req, res) => {
  const events = res.sse();
  const timer = setInterval(() => events.send({ t: Date.now() }), 50);
  req.signal.addEventListener('abort', () => clearInterval(timer));
});
app.mount('/web', () => {
  const body = new ReadableStream<Uint8Array>({
    async start(c) {
      c.enqueue(enc.encode('<p>head</p>'));
      await sleep(800);
      c.enqueue(enc.encode('<p>tail</p>'));
      c.close();
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/html' } });
});
app.post('/upload', async (req) => {
  let bytes = 0;
  for await (const part of req.multipart()) {
    if (part.kind === 'file') for await (const chunk of part.stream) bytes += (chunk as Buffer).byteLength;
  }
  return { bytes };
});
// A socket sent more than its client reads (the client pauses): 6 MiB, more than the kernel's
// socket buffers hold, so most of it waits in uWS (backpressure, under maxBackpressure).
app.ws('/ws', {
  maxBackpressure: 16 << 20,
  open(ws) {
    for (let i = 0; i < 384; i++) ws.sendRaw(new Uint8Array(16 << 10).fill(i));
  },
});
app.static('/static', dir, { memoryThreshold: 1 << 20 });

async function measure() {
  for (let i = 0; i < 4; i++) {
    globalThis.gc!();
    await sleep(20);
  }
  return { fds: readdirSync('/proc/self/fd').length, heap: process.memoryUsage().heapUsed };
}

const before = await measure();
const server = await app.listen({ port: 0, host: '127.0.0.1', signals: mode === 'signal', shutdownTimeout: TIMEOUT });
// Synchronous: the hooks get what is left of the shutdown timeout, nothing once a request
// used all of it, and with signals the process then ends by the re-raised signal.
app.onClose(() => {
  for (let i = 0; i < 4; i++) globalThis.gc!();
  const after = { fds: readdirSync('/proc/self/fd').length, heap: process.memoryUsage().heapUsed };
  console.log('AFTER ' + JSON.stringify({ before, after, inflight: app.inflight }));
});
console.log('PORT ' + server.port);
if (mode === 'close') {
  process.stdin.once('data', () => {
    const t0 = Date.now();
    void server.close({ timeout: TIMEOUT }).then(() => console.log('CLOSED ' + (Date.now() - t0)));
    process.stdin.destroy(); // nothing of ours may keep the process alive after close()
  });
}
