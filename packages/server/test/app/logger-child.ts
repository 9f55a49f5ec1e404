// A small app with no `logger` option, run by default-logger.test.ts in a child process so
// that its stderr (a pipe, or a terminal through `script`) can be read as a user would see it.
//   node logger-child.ts errors|silent|tls|cluster
// Prints `ready <url>` on stdout once done; everything Tachyon says goes to stderr.
import { isMainThread } from 'node:worker_threads';
import { App, cluster, silentLogger } from '../../src/index.ts';

// cluster()'s workers run this module again, without the argument.
const mode = isMainThread ? process.argv[2] : 'cluster';

function routes(app: App): App {
  app.get('/throw/:id', () => {
    throw new Error('boom');
  });
  app.get('/twice', (req, res) => {
    res.json({ a: 1 });
    res.json({ b: 2 });
  });
  app.get('/returned', (req, res) => {
    res.json({ a: 1 });
    return { b: 2 };
  });
  app.get('/header', (req, res) => {
    res.send('body');
    res.header('x-late', '1');
  });
  return app;
}

if (mode === 'cluster') {
  const server = await cluster({ workers: 2, host: '127.0.0.1', port: 0, signals: false }, () => routes(new App()));
  console.log(`ready http://127.0.0.1:${server.port}`);
  await server.close();
} else {
  const tls = mode === 'tls' ? { key: process.env.TLS_KEY!, cert: process.env.TLS_CERT! } : undefined;
  const app = routes(new App(mode === 'silent' ? { logger: silentLogger } : { tls }));
  const server = await app.listen(0, '127.0.0.1');
  const url = `${tls ? 'https' : 'http'}://127.0.0.1:${server.port}`;
  if (!tls) for (const path of ['/throw/1', '/twice', '/returned', '/header']) await (await fetch(url + path)).text();
  console.log(`ready ${url}`);
  await server.close();
}
