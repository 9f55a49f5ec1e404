// The race on cluster() for cluster.test.ts: the game's App as server.ts builds it (without the
// pages), on WORKERS workers, with short countdowns and one passage. One test-only route,
// GET /test/crash?worker=N: worker N throws an uncaught error (others answer 409). The primary
// prints `{ "ready": port }` once listening; logs are JSON lines.
import { cluster, jsonLogger } from '@tachyon/server';
import { createGameApp } from '../src/server/index.ts';

const server = await cluster(
  { workers: 2, port: 0, host: '127.0.0.1', restartDelay: 200, shutdownTimeout: 2000, logger: jsonLogger('info') },
  () => {
    const game = createGameApp({
      cookieSecret: 'test-secret',
      config: { waitSeconds: 1, countdownSeconds: 1 },
      passages: ['type me quick'],
      app: { logger: jsonLogger('warn') },
    });
    const { app } = game;
    app.onClose(() => game.stop());
    app.get('/test/crash', (req, res) => {
      if (Number(req.query.worker) !== app.worker) return res.status(409).json({ worker: app.worker });
      setTimeout(() => {
        throw new Error('the owner crashed');
      }, 20);
      return { crashing: app.worker };
    });
    return app;
  },
);
console.log(JSON.stringify({ ready: server.port, workers: server.workers }));
