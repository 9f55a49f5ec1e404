// One Tachyon server of an app spread over several (bench/cross-server.mjs): the /fanout
// route of servers/tachyon.mjs, with publishes carried to the other servers by a bus.
//   BUS=redis|nats  BUS_URL=redis://… | nats://…
import { App } from '@tachyon/server';
import { redisBus } from '../../packages/redis/dist/index.js';
import { natsBus } from '../../packages/nats/dist/index.js';
import { portFromEnv, ready, WS_MAX_PAYLOAD } from './shared.mjs';

const kind = process.env.BUS ?? 'redis';
const bus =
  kind === 'nats'
    ? natsBus({ servers: process.env.BUS_URL })
    : redisBus({ url: process.env.BUS_URL, sharded: process.env.BUS_SHARDED === '1' });
const app = new App({ bus });
// Subscribers subscribe with the protocol's subscribe frame (the loadgen sends it); the
// senders, on the other server, only send.
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
const server = await app.listen({ port: portFromEnv(), host: '127.0.0.1' });
// Wait for the broker: the bench measures the connected state, not the start-up.
while (!bus.ready()) await new Promise((r) => setTimeout(r, 20));
ready(server.port);
