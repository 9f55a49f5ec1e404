// A cluster() process on a broker, as a user would write it (cluster-buses.test.ts starts two):
// MODE=per-worker gives each worker's App its own broker bus (new App({ bus })), MODE=primary
// gives the bus to cluster() (the primary relays), MODE=both gives both (refused), HISTORY=memory declares a
// history topic on the default memory store (refused with a broker), PRESENCE=1 presence on p:*. KIND=redis|nats, URL, WORKERS. The primary
// prints `{ "ready": port }` and answers { op: 'stats' } over IPC with its relay bus's counters;
// the workers answer WebSocket requests (who, pub, ask: app.requestAll, crash, stats, counts, heard: META=1's deliveries).
import { threadId } from 'node:worker_threads';
// From the source, like workerStats() below (one module instance); the broker buses come from
// the packages and are used through the Bus interface.
import { App, cluster, jsonLogger, type Bus, type BrokerBus } from '../../packages/server/src/index.ts';
import { redisBus } from '@tachyon/redis';
import { natsBus } from '@tachyon/nats';
import { workerStats } from '../../packages/server/src/cluster/worker.ts';

const env = process.env;
const makeBus = (): BrokerBus => {
  const options = { presenceInterval: 200, logger: jsonLogger('info') };
  return (env.KIND === 'nats'
    ? natsBus({ servers: env.URL!, ...options })
    : redisBus({ url: env.URL!, ...options })) as unknown as BrokerBus;
};
const relayBus = env.MODE === 'primary' || env.MODE === 'both' ? makeBus() : undefined;

const server = await cluster(
  {
    workers: 2,
    port: 0,
    host: '127.0.0.1',
    bus: relayBus as Bus | undefined,
    logger: jsonLogger('info'),
    restartDelay: 50,
    shutdownTimeout: 2000,
  },
  () => {
    const own = env.MODE === 'primary' ? undefined : makeBus();
    const app = new App({ bus: own, logger: jsonLogger('warn'), presence: { heartbeat: 200 } });
    // PRESENCE=1: presence on p:* topics, members by the ?id= of the connection.
    if (env.PRESENCE === '1') app.topic('p:*', { presence: { id: (ws) => (ws.data as { id?: string }).id, events: true } });
    // HISTORY=memory: a history topic on the default store (refused with a broker: not shared).
    if (env.HISTORY === 'memory') app.topic('h:*', { history: { size: 10 } });
    // META=1: publishes carry metadata naming their process and worker; deliveries record it (the relay's path).
    const heard: unknown[] = [];
    if (env.META === '1') {
      app.addHook('onPublish', () => ({ from: `${process.pid}/${app.worker}` }));
      app.addHook('onDeliver', (topic, meta) => void heard.push({ topic, ...meta }));
    }
    const timers = new Set<NodeJS.Timeout>();
    app.ws('/ws', {
      upgrade: (req) => ({ id: (req.query as Record<string, string | undefined>).id }),
      events: {
        who: { handler: () => ({ worker: app.worker, thread: threadId }) },
        heard: { handler: () => heard },
        // n publishes of { from, seq }; with `every` (ms), one per tick in the background.
        pub: {
          handler: (_socket, d: any) => {
            const send = (seq: number) => app.publish(d.topic, 'n', { from: d.from, seq });
            if (!d.every) {
              for (let i = 0; i < d.n; i++) send((d.start ?? 0) + i);
              return true;
            }
            let seq = 0;
            const timer = setInterval(() => {
              send(seq++);
              if (seq >= d.n) clearInterval(timer), timers.delete(timer);
            }, d.every);
            timers.add(timer);
            return true;
          },
        },
        // app.requestAll(topic, 'ack', data) from this worker: the replies, and the missing with their codes.
        ask: {
          handler: async (_socket, d: any) => {
            const r = await app.requestAll(d.topic, 'ack', d.data, { timeout: d.timeout });
            return { replies: r.replies, missing: r.missing.map((m) => ({ id: m.id, code: m.error.code })) };
          },
        },
        crash: {
          handler: () => {
            setTimeout(() => {
              throw new Error('worker bug');
            }, 10);
            return true;
          },
        },
        counts: { handler: (_socket, topic: string) => ({ local: app.subscribers(topic), cluster: app.cluster.subscribers(topic) }) },
        stats: { handler: () => ({ worker: app.worker, ready: app.busReady, thread: workerStats(), broker: own?.stats() ?? null }) },
      },
    });
    return app;
  },
);
process.on('message', (m: { id: number; op: string }) => {
  if (m.op === 'stats') process.send!({ id: m.id, result: relayBus?.stats() ?? null });
});
process.on('disconnect', () => void server.close({ timeout: 1000 }).then(() => process.exit(0)));
console.log(JSON.stringify({ ready: server.port, workers: server.workers }));
