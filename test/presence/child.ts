// One Tachyon server with a Redis bus and the presence suite's routes, in its own process, so
// the parent can kill it with SIGKILL (a crash: no goodbye on the bus). argv: redis URL, heartbeat ms.
import { redisBus } from '@tachyon/redis';
import { App, type Bus } from '../../packages/server/src/index.ts';
import { setupPresenceApp } from '../../packages/server/test/realtime/presence/suite.ts';

const [url, heartbeat] = process.argv.slice(2);
const app = new App({ bus: redisBus({ url: url! }) as unknown as Bus, presence: { heartbeat: Number(heartbeat) } });
setupPresenceApp(app);
const server = await app.listen({ port: 0, host: '127.0.0.1' });
process.on('message', async (m: { op: 'close' }) => {
  if (m.op === 'close') {
    await server.close({ timeout: 2000 });
    process.exit(0);
  }
});
process.send!({ port: server.port });
