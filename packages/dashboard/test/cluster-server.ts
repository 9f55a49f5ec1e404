// A cluster of 2 worker threads with the dashboard (cluster.test.ts starts it as its own
// process and reads the port from the `ready` line; so does browser-cluster.test.ts).
import { App, cluster, type Request } from '@tachyon/server';
import { dashboard } from '../src/index.ts';

const server = await cluster({ workers: 2, port: 0, host: '127.0.0.1', shutdownTimeout: 3000 }, async () => {
  const app = new App();
  app.get('/hello', () => 'hi');
  app.ws('/live', { upgrade: (req) => ({ id: req.query.user ?? 'anon' }), events: { who: { handler: () => app.worker } } });
  // The header for the Node clients, the cookie for Chromium (browser-cluster.test.ts).
  const auth = (req: Request) => req.header('authorization') === 'Bearer s3cret' || req.cookies.operator === 'let-me-in';
  await app.register(dashboard({ auth, actions: true, interval: 250 }));
  return app;
});
console.log(JSON.stringify({ ready: server.port }));
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
