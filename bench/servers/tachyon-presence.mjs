// bench/presence.mjs's server: the fan-out route of tachyon-app.mjs, and a churn route, with
// presence on the topics (PRESENCE=1) or not (PRESENCE=0). Both variants do the same work
// otherwise: every socket gets a member id from `upgrade`. Imports the built framework
// (packages/server/dist) directly: no bench install needed.
import { App } from '../../packages/server/dist/index.js';
import { portFromEnv, ready } from './shared.mjs';

const presence = process.env.PRESENCE === '1';
const app = new App();
if (presence) {
  app.topic('bench', { presence: true });
  app.topic('churn:*', { presence: { events: process.env.PRESENCE_EVENTS === '1' } });
}
let next = 0;
const upgrade = () => ({ id: `u${++next}` });
app.ws('/fanout', {
  upgrade,
  open(ws) {
    ws.subscribe('bench');
  },
  events: {
    'bench:publish': {
      handler(ws, data) {
        app.publish('bench', 'bench', data);
      },
    },
  },
  idleTimeout: 0,
  maxSubscriptions: 100_000,
});
app.ws('/churn', { upgrade, idleTimeout: 0, maxSubscriptions: 100_000 });
const server = await app.listen({ port: portFromEnv(), host: '127.0.0.1' });
ready(server.port);
