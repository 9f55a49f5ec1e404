// The server of bench/soak.mjs, in its own process (run with --expose-gc): one route per kind
// of traffic the soak drives, history and presence topics fed by a timer and by clients, and
// a sampler that prints `SAMPLE {json}` every INTERVAL ms: RSS and heap after gc(), open
// descriptors, active handles, event-loop delay (p99 and max since the last sample), requests
// in flight. Prints `READY <port>` once listening; SIGTERM closes it gracefully (signals).
// Imports the built framework (packages/server/dist): `npm run build` after changing it.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { App, health, jsonLogger } from '../packages/server/dist/index.js';

const INTERVAL = Number(process.env.INTERVAL ?? 5000);
const TOPICS = 10;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const dir = mkdtempSync(join(tmpdir(), 'tachyon-soak-'));
writeFileSync(join(dir, 'small.css'), 'body { color: #123456; }\n'.repeat(200));
writeFileSync(join(dir, 'big.bin'), Buffer.alloc(2 << 20, 7)); // over memoryThreshold: streamed from disk

const app = new App({ compression: true, logger: jsonLogger('warn'), bodyLimit: 1 << 20 });
app.use(health());
app.topic('hist:*', { history: { size: 200 } });
app.topic('pres:*', { presence: { events: true } });

const rows = Array.from({ length: 400 }, (_, i) => ({ id: i, name: `row ${i}`, tags: ['a', 'b', 'c'] }));
app.get('/json', () => ({ ok: true, at: Date.now() }));
app.get('/text', () => 'hello');
app.get('/big', () => ({ rows })); // about 20 KB of JSON: compressed (br or gzip) when asked
app.post('/echo', async (req) => ({ got: await req.json() }));
app.post('/upload', async (req) => {
  let bytes = 0;
  for await (const part of req.multipart()) if (part.kind === 'file') for await (const c of part.stream) bytes += c.byteLength;
  return { bytes };
});
app.get('/slow', async (req) => {
  await sleep(50 + Math.floor(Math.random() * 150));
  return req.signal.aborted ? undefined : 'slow';
});
app.get('/stream', async (req, res) => {
  await res.type('text/plain').stream(
    (async function* () {
      for (let i = 0; i < 20 && !req.signal.aborted; i++) {
        yield `chunk ${i} `.repeat(100);
        await sleep(20);
      }
    })(),
  );
});
app.get('/sse', (req, res) => {
  const events = res.sse();
  let n = 0;
  const timer = setInterval(() => events.send({ n: n++ }), 50);
  req.signal.addEventListener('abort', () => clearInterval(timer));
});
app.static('/static', dir, { memoryThreshold: 1 << 20 });
app.ws('/ws', {
  upgrade: (req) => ({ id: String(req.query.user ?? 'anon') }),
  events: {
    pub: {
      handler(_ws, data) {
        const topic = String(data?.topic ?? '');
        if (!/^(hist|pres):\d+$/.test(topic)) return { ok: false };
        app.publish(topic, 'm', { n: data.n });
        return { ok: true };
      },
    },
  },
});

// Publishes on every history and presence topic, whoever listens.
let seq = 0;
const feed = setInterval(() => {
  for (let t = 0; t < TOPICS; t++) {
    app.publish(`hist:${t}`, 'm', { n: seq });
    app.publish(`pres:${t}`, 'm', { n: seq });
  }
  seq++;
}, 50);

const loop = monitorEventLoopDelay({ resolution: 2 });
loop.enable();
async function sample() {
  const delay = { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };
  loop.reset();
  for (let i = 0; i < 3; i++) {
    globalThis.gc();
    await sleep(10);
  }
  const m = process.memoryUsage();
  return {
    t: Date.now(),
    rss: m.rss,
    heap: m.heapUsed,
    external: m.external,
    fds: readdirSync('/proc/self/fd').length,
    handles: process.getActiveResourcesInfo().length,
    inflight: app.inflight,
    elP99: delay.p99,
    elMax: delay.max,
  };
}
const sampler = setInterval(async () => console.log('SAMPLE ' + JSON.stringify(await sample())), INTERVAL);

app.onClose(() => {
  clearInterval(feed);
  clearInterval(sampler);
  rmSync(dir, { recursive: true, force: true });
});
const server = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1', signals: true, shutdownTimeout: 5000 });
console.log('BASELINE ' + JSON.stringify(await sample()));
console.log(`READY ${server.port}`);
