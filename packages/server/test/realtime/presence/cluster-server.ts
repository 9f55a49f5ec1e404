// A cluster of worker threads with the presence suite's routes (cluster.test.ts starts it as
// its own process). GET /presence/:topic answers from whichever worker got the request: its
// id, its own subscribers of the topic, and the members it lists.
import { App, cluster } from '../../../src/index.ts';
import { setupPresenceApp } from './suite.ts';

const server = await cluster({ workers: 2, port: 0, host: '127.0.0.1', restartDelay: 50, shutdownTimeout: 3000 }, () => {
  const app = new App({ presence: { heartbeat: 200 } });
  setupPresenceApp(app);
  app.get('/crash', () => {
    setTimeout(() => {
      throw new Error('worker bug'); // an uncaught exception: the thread dies without closing its app
    });
    return { crashing: app.worker };
  });
  app.get('/presence/:topic', async (req) => ({
    worker: app.worker,
    local: app.subscribers(req.params.topic),
    members: await app.presence(req.params.topic),
  }));
  return app;
});
console.log(JSON.stringify({ ready: server.port }));
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
