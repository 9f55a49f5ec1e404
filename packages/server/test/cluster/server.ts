// The app the cluster tests run, as a user would: one file, started with `node server.ts`,
// running in the primary and again in every worker. Configured by environment variables
// (the tests set WORKERS, STALL_MS, FACTORY_THROWS, COALESCE, TLS_KEY/TLS_CERT, METRICS_TIMEOUT). The primary
// prints one JSON line `{ "ready": port, ... }` once listening; logs are JSON lines.
import { writeFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';
import { App, cluster, jsonLogger, metrics } from '../../src/index.ts';
import { workerStats } from '../../src/cluster/worker.ts';

const env = process.env;
const tls = env.TLS_KEY && env.TLS_CERT ? { key: env.TLS_KEY, cert: env.TLS_CERT } : undefined;

const server = await cluster(
  {
    workers: 3, // the tests override it with WORKERS
    port: 0,
    host: '127.0.0.1',
    tls,
    reusePort: env.REUSE_PORT === '1',
    stallTimeout: Number(env.STALL_MS ?? 10_000),
    restartDelay: 50,
    shutdownTimeout: 5000,
    logger: jsonLogger('info'),
  },
  () => {
    if (env.FACTORY_THROWS) throw new Error('factory failed: no database');
    const app = new App({ tls: env.APP_NO_TLS ? undefined : tls, logger: jsonLogger('warn'), coalescePublishes: env.COALESCE === '1' });
    if (env.METRICS_TIMEOUT) app.use(metrics({ clusterTimeout: Number(env.METRICS_TIMEOUT) }));
    if (env.STATIC_DIR) app.static('/static', env.STATIC_DIR);
    // bus-meta.test.ts: publishes carry metadata naming their worker; deliveries record what came with them.
    const heard: unknown[] = [];
    const paid = new Map<string, number>();
    if (env.BUS_META === '1') {
      app.addHook('onPublish', (_topic, info) => ({ worker: String(app.worker), event: String(info.event) }));
      app.addHook('onDeliver', (topic, meta) => void heard.push({ topic, ...meta }));
    }
    app.get('/heard', () => ({ worker: app.worker, heard }));
    app.get('/log', () => {
      app.logger.warn('a line from the app');
      return { worker: app.worker };
    });
    app.get('/who', () => ({ worker: app.worker, thread: threadId }));
    app.get('/slow', async (req) => {
      await new Promise((r) => setTimeout(r, Number(req.query.ms ?? 200)));
      return { worker: app.worker };
    });
    app.get('/crash', () => {
      setTimeout(() => {
        throw new Error('worker bug');
      });
      return { crashing: app.worker };
    });
    app.get('/exit', () => {
      setTimeout(() => process.exit(7), 10);
      return { exiting: app.worker };
    });
    // exit-churn.test.ts: process.exit() in a cluster worker returns (the worker leaves a few ms
    // later, cluster/leave.ts), so this answer still goes out; a bad code throws as in Node.
    app.get('/exit-now', (req) => {
      process.exit(req.query.code === 'bad' ? 1.5 : 7);
      return { exiting: app.worker, after: true };
    });
    app.get('/block', (req) => {
      const ms = Number(req.query.ms ?? 1000);
      setTimeout(() => {
        const end = Date.now() + ms;
        while (Date.now() < end);
      }, 10);
      return { blocking: app.worker };
    });
    app.get('/stall', () => {
      setTimeout(() => {
        for (;;);
      }, 10);
      return { stalling: app.worker };
    });
    app.get('/counts', (req) => {
      const topic = String(req.query.topic ?? 'room');
      return {
        worker: app.worker,
        local: app.subscribers(topic),
        cluster: app.cluster.subscribers(topic),
        connections: app.connections,
        clusterConnections: app.cluster.connections,
        ...workerStats(),
      };
    });
    app.get('/publish', (req) => {
      const n = Number(req.query.n ?? 1);
      for (let i = 0; i < n; i++) app.publish(String(req.query.topic ?? 'room'), 'tick', { from: app.worker, i });
      return { worker: app.worker };
    });
    // requests.test.ts: app.cluster.request()/handle() between workers.
    app.cluster.handle('echo', (data, from) => ({ data, from, at: app.worker }));
    app.cluster.handle('fail', () => {
      throw new Error('handler broke');
    });
    app.cluster.handle('slow', async (ms: number) => {
      await new Promise((r) => setTimeout(r, ms));
      return { late: app.worker };
    });
    app.cluster.handle('never', () => new Promise(() => {}));
    app.cluster.handle('bad-reply', () => ({ fn: () => 1 }));
    // Answers at once, then on its next turn blocks for `ms` and throws: what reached it meanwhile is read after the crash.
    app.cluster.handle('busy-then-die', (ms: number) => {
      setTimeout(() => {
        const end = Date.now() + ms;
        while (Date.now() < end);
        throw new Error('worker bug after a busy spell');
      });
      return { busy: app.worker };
    });
    // A request with a side effect outside the worker: whether its handler ran shows after the worker is gone.
    app.cluster.handle('touch', (file: string) => {
      writeFileSync(file, String(app.worker));
      return { touched: app.worker };
    });
    app.cluster.handle('die', () => {
      setTimeout(() => {
        throw new Error('worker bug while asked');
      }, 10);
      return new Promise(() => {});
    });
    const ask = (to: number, channel: string, data: unknown, timeout?: number) =>
      app.cluster.request(to, channel, data, timeout === undefined ? {} : { timeout }).then(
        (reply) => ({ reply }),
        (err: any) => ({ error: { name: err.name, code: err.code, worker: err.worker, channel: err.channel, message: err.message } }),
      );
    app.get('/ask', async (req) => {
      const q = req.query as Record<string, string>;
      const data = q.data === 'fn' ? () => 1 : q.data === undefined ? undefined : JSON.parse(q.data);
      const started = Date.now();
      // to=other: the other worker of two (so that the worker asked is never the one asking).
      const to = q.to === 'other' ? (app.worker === 1 ? 2 : 1) : Number(q.to);
      const first = await ask(to, q.channel ?? 'echo', data, q.timeout ? Number(q.timeout) : undefined);
      // again=1: asks once more as soon as the first settled (a worker that just died is not back yet).
      const again = q.again ? await ask(to, 'echo', 'again') : undefined;
      return { asker: app.worker, ms: Date.now() - started, ...first, again };
    });
    // Asks the other worker to block then die, and while it is blocked asks it to touch a file:
    // that request is only read after its crash.
    app.get('/ask-dying', async (req) => {
      const to = app.worker === 1 ? 2 : 1;
      const first = await ask(to, 'busy-then-die', 400);
      await new Promise((r) => setTimeout(r, 100));
      return { asker: app.worker, first, late: await ask(to, 'touch', String(req.query.file), 5000) };
    });
    // request-all.test.ts: app.requestAll() gathers every worker's subscribers.
    app.get('/request-all', async (req) => {
      const q = req.query as Record<string, string>;
      const { replies, missing } = await app.requestAll(
        q.topic ?? 'acks',
        q.event ?? 'ack',
        { n: 1 },
        { timeout: Number(q.timeout ?? 2000) },
      );
      return { worker: app.worker, replies, missing: missing.map((m) => ({ id: m.id, code: m.error.code, message: m.error.message })) };
    });
    // drain.test.ts: app.cluster.drain(); `from`: only when this worker is asked (else skipped).
    app.get('/drain', async (req) => {
      const target = Number(req.query.worker);
      if (req.query.from !== undefined && Number(req.query.from) !== app.worker) return { asker: app.worker, skipped: true };
      try {
        await app.cluster.drain(target);
        return { asker: app.worker, drained: target };
      } catch (err) {
        return { asker: app.worker, error: (err as Error).message };
      }
    });
    app.topic('hist:*', { history: { size: 1000 } }); // history.test.ts: the primary's memory store
    app.topic('kept:*', { history: { size: 3 } }); // history.test.ts: kept() through the primary
    app.get('/topic-stats', async (req) => ({ worker: app.worker, ...(await app.topicStats(String(req.query.topic))) }));
    app.ws('/live', {
      events: {
        who: { handler: () => app.worker },
        // retries.test.ts: a keyed request runs once in the cluster; `runs` counts this worker's runs of an id.
        pay: {
          handler: async (_socket, d: any) => {
            paid.set(d.id, (paid.get(d.id) ?? 0) + 1);
            await new Promise((r) => setTimeout(r, d.ms ?? 0));
            return { worker: app.worker, id: d.id };
          },
        },
        runs: { handler: (_socket, id: any) => paid.get(id) ?? 0 },
        stats: { handler: () => ({ worker: app.worker, ...workerStats() }) },
        say: {
          handler: (socket, data: any) => {
            for (let i = 0; i < (data.n ?? 1); i++)
              socket.publish(data.topic, 'said', { from: app.worker, i, ...(data.pad ? { pad: data.pad } : {}) });
            return true;
          },
        },
      },
    });
    return app;
  },
);
console.log(JSON.stringify({ ready: server.port, workers: server.workers, mode: server.mode }));
