// The server of bench/soak.mjs, in its own process (run with --expose-gc): one route per kind
// of traffic the soak drives, history and presence topics fed by a timer and by clients, and
// a sampler that prints `SAMPLE {json}` every INTERVAL ms: RSS and heap after gc(), open
// descriptors, active handles, event-loop delay (p99 and max since the last sample), requests
// in flight. Prints `READY <port>` once listening; SIGTERM closes it gracefully (signals).
// CLUSTER=<workers> runs the same app under cluster(): see clusterSampler() below.
// Imports the built framework (packages/server/dist): `npm run build` after changing it.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';
import { App, cluster, health, jsonLogger } from '../packages/server/dist/index.js';

const INTERVAL = Number(process.env.INTERVAL ?? 5000);
const WORKERS = Number(process.env.CLUSTER ?? 0);
const TOPICS = 10;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The files app.static() serves: made once by the main thread; cluster workers inherit the env.
if (isMainThread) {
  process.env.SOAK_DIR = mkdtempSync(join(tmpdir(), 'tachyon-soak-'));
  writeFileSync(join(process.env.SOAK_DIR, 'small.css'), 'body { color: #123456; }\n'.repeat(200));
  writeFileSync(join(process.env.SOAK_DIR, 'big.bin'), Buffer.alloc(2 << 20, 7)); // over memoryThreshold: streamed from disk
}
const dir = process.env.SOAK_DIR;

function makeApp() {
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

  app.onClose(() => clearInterval(feed));
  if (WORKERS > 0) clusterSampler(app);
  return app;
}

// Each thread (the process, or the primary and every cluster worker) measures its own heap,
// handles and event-loop delay; RSS and descriptors belong to the whole process.
const loop = monitorEventLoopDelay({ resolution: 2 });
loop.enable();
async function sampleThread() {
  const delay = { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };
  loop.reset();
  for (let i = 0; i < 3; i++) {
    globalThis.gc();
    await sleep(10);
  }
  const m = process.memoryUsage();
  return { heap: m.heapUsed, external: m.external, handles: process.getActiveResourcesInfo().length, elP99: delay.p99, elMax: delay.max };
}
const processWide = () => ({ t: Date.now(), rss: process.memoryUsage().rss, fds: readdirSync('/proc/self/fd').length });

/**
 * Under cluster(): worker 1 asks every worker (app.cluster.request) for its sample, each after
 * its own gc(), then reads the process's RSS and descriptors and prints one SAMPLE line:
 * `workers` per worker, `heap`/`handles` summed and `elP99`/`elMax` the worst of them, so the
 * single-process verdict and chart read it unchanged. The primary thread's own sample comes
 * on its PRIMARY lines (below); soak.mjs joins the latest to each SAMPLE.
 */
function clusterSampler(app) {
  app.cluster.handle('soak:sample', async () => ({ worker: app.cluster.worker, inflight: app.inflight, ...(await sampleThread()) }));
  if (app.cluster.worker !== 1) return;
  const gather = async () => {
    const ids = Array.from({ length: app.cluster.workers }, (_, i) => i + 1);
    const workers = await Promise.all(ids.map((w) => app.cluster.request(w, 'soak:sample', undefined, { timeout: 20_000 })));
    const sum = (k) => workers.reduce((a, w) => a + w[k], 0);
    const worst = (k) => Math.max(...workers.map((w) => w[k]));
    return {
      ...processWide(),
      heap: sum('heap'),
      external: sum('external'),
      handles: sum('handles'),
      inflight: sum('inflight'),
      elP99: worst('elP99'),
      elMax: worst('elMax'),
      workers,
    };
  };
  const print = async (tag) => console.log(`${tag} ${JSON.stringify(await gather())}`);
  let sampler;
  // The baseline as soon as every worker answers (soak.mjs starts its load after it).
  const tryBaseline = () =>
    print('BASELINE').then(
      () => (sampler = setInterval(() => print('SAMPLE').catch((e) => console.error(`soak sampler: ${e.message}`)), INTERVAL)),
      () => (sampler = setTimeout(tryBaseline, 500)),
    );
  sampler = setTimeout(tryBaseline, 500);
  app.onClose(() => clearTimeout(sampler)); // clears the interval too
}

if (WORKERS > 0) {
  const server = await cluster(
    { workers: WORKERS, port: Number(process.env.PORT ?? 0), host: '127.0.0.1', shutdownTimeout: 5000, logger: jsonLogger('warn') },
    makeApp,
  );
  // Only the primary thread gets here (in a worker, cluster() never returns).
  const primary = setInterval(async () => console.log(`PRIMARY ${JSON.stringify({ t: Date.now(), ...(await sampleThread()) })}`), INTERVAL);
  primary.unref(); // the re-raised SIGTERM ends the process; this timer must not keep it
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  console.log(`READY ${server.port}`);
} else {
  const app = makeApp();
  const sample = async () => ({ ...processWide(), inflight: app.inflight, ...(await sampleThread()) });
  const sampler = setInterval(async () => console.log('SAMPLE ' + JSON.stringify(await sample())), INTERVAL);
  app.onClose(() => {
    clearInterval(sampler);
    rmSync(dir, { recursive: true, force: true });
  });
  const server = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1', signals: true, shutdownTimeout: 5000 });
  console.log('BASELINE ' + JSON.stringify(await sample()));
  console.log(`READY ${server.port}`);
}
