// Worker side of acceptor.test.ts: an App with one route, started without a listen socket;
// its descriptor goes to the acceptor in the main thread.
import { parentPort, threadId } from 'node:worker_threads';
import { App } from '../../src/index.ts';

const app = new App();
app.get('/who', () => ({ thread: threadId }));
app.ws('/live', { events: { who: { handler: () => threadId } } });
const { descriptor, server } = await app.startForAcceptor(0);
parentPort!.postMessage({ descriptor });
parentPort!.on('message', async (msg: string) => {
  if (msg !== 'close') return;
  await server.close({ timeout: 1000 });
  parentPort!.postMessage({ closed: true });
});
