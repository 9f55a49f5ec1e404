// A cluster() process of an app spread over several (bench/cluster-bus.mjs): 2 worker threads
// with the /fanout route of servers/tachyon-bus.mjs, joined to the other processes by a broker
// in one of the two designs of docs/cluster.md ("With a broker"):
//   BUS_MODE=per-worker  each worker's App has its own bus (composed with the in-process mesh)
//   BUS_MODE=primary     cluster({ bus }): the primary holds one connection and relays
//   BUS_MODE=none        no broker (the in-process mesh alone: the in-machine reference)
//   BUS=redis|nats  BUS_URL=redis://… | nats://…  TACHYON_WORKERS (default 2)
import { App, cluster } from '@tachyon/server';
import { redisBus } from '../../packages/redis/dist/index.js';
import { natsBus } from '../../packages/nats/dist/index.js';
import { portFromEnv, WS_MAX_PAYLOAD } from './shared.mjs';

const mode = process.env.BUS_MODE ?? 'per-worker';
const makeBus = () => (process.env.BUS === 'nats' ? natsBus({ servers: process.env.BUS_URL }) : redisBus({ url: process.env.BUS_URL }));
const relay = mode === 'primary' ? makeBus() : undefined;

const server = await cluster(
  {
    workers: Number(process.env.TACHYON_WORKERS ?? 2),
    forceThreads: true,
    port: portFromEnv(),
    host: '127.0.0.1',
    stallTimeout: 0,
    bus: relay,
  },
  () => {
    const app = new App({ bus: mode === 'per-worker' ? makeBus() : undefined });
    app.ws('/fanout', {
      events: {
        'bench:publish': {
          handler(ws, data) {
            app.publish('bench', 'bench', data);
          },
        },
      },
      maxPayloadLength: WS_MAX_PAYLOAD,
      idleTimeout: 0,
    });
    return app;
  },
);
// Wait for the broker: the bench measures the connected state, not the start-up. The
// primary sees its own connection; per-worker connections are given a moment.
if (relay !== undefined) while (!relay.ready()) await new Promise((r) => setTimeout(r, 20));
else if (mode === 'per-worker') await new Promise((r) => setTimeout(r, 1000));
process.stdout.write(`READY ${server.port}\n`);
if (process.env.BENCH_HARNESS === '1') {
  process.stdin.on('end', () => void server.close({ timeout: 1000 }));
  process.stdin.on('error', () => void server.close({ timeout: 1000 }));
  process.stdin.resume();
}
