// Probe for tls.test.ts, the shape of upstream's examples/WorkerThreads with TLS: an SSL
// acceptor handing connections to SSL child apps in two worker threads (which do not listen
// themselves). Makes 200 HTTPS requests, half on fresh connections, half keep-alive, and
// prints what each worker served. uWebSockets.js issue #1119 reports a SIGSEGV for this
// shape when the workers also listen; this is what cluster() relies on.
import https from 'node:https';
import { isMainThread, parentPort, threadId, Worker, workerData } from 'node:worker_threads';
import { loadUws } from '../../src/uws/index.ts';

const uws = loadUws();
if (isMainThread) {
  const [key, cert] = process.argv.slice(2) as [string, string];
  const acceptor = uws.SSLApp({ key_file_name: key, cert_file_name: cert });
  const workers: Worker[] = [];
  for (let i = 0; i < 2; i++) {
    const worker = new Worker(new URL(import.meta.url), { workerData: { key, cert } });
    workers.push(worker);
    acceptor.addChildAppDescriptor(await new Promise<number>((resolve) => worker.once('message', resolve)));
  }
  acceptor.listen('127.0.0.1', 0, uws.LIBUS_LISTEN_EXCLUSIVE_PORT, async (socket) => {
    const port = uws.us_socket_local_port(socket as never);
    const keepAlive = new https.Agent({ keepAlive: true, maxSockets: 4 });
    const get = (agent: https.Agent | false) =>
      new Promise<string>((resolve, reject) => {
        https
          .get({ host: '127.0.0.1', port, path: '/', rejectUnauthorized: false, agent }, (res) => {
            let body = '';
            res.on('data', (d) => (body += d)).on('end', () => resolve(body));
          })
          .on('error', reject);
      });
    const served: Record<string, number> = {};
    let errors = 0;
    await Promise.all(
      Array.from({ length: 8 }, async (_, k) => {
        for (let i = 0; i < 25; i++) {
          try {
            const body = await get(k % 2 === 0 ? false : keepAlive);
            served[body] = (served[body] ?? 0) + 1;
          } catch {
            errors++;
          }
        }
      }),
    );
    keepAlive.destroy();
    console.log(JSON.stringify({ served, errors }));
    // Threads holding uWS sockets must not be torn down by process.exit: close them first.
    for (const w of workers) w.postMessage('close');
    await Promise.all(workers.map((w) => new Promise((r) => w.once('exit', r))));
    uws.us_listen_socket_close(socket as never);
    acceptor.close();
  });
} else {
  const app = uws.SSLApp({ key_file_name: workerData.key, cert_file_name: workerData.cert });
  app.get('/', (res) => void res.end(`worker ${threadId}`));
  parentPort!.postMessage(app.getDescriptor());
  // The listener keeps this thread, and its uWS loop, alive (a child app's thread that ends
  // leaves the acceptor pointing at a freed loop: SIGSEGV on the next connection).
  parentPort!.on('message', () => {
    app.close();
    parentPort!.close();
  });
}
