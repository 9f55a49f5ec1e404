// Type tests for cluster(): options, the factory, the primary's server, the app's worker id
// and cluster-wide counts. Every @ts-expect-error line must be an error, or the compile fails.
import {
  App,
  ClusterRequestError,
  cluster,
  type ClusterCounts,
  type ClusterHandler,
  type ClusterMember,
  type Server,
  type ClusterOptions,
  type ClusterRequestErrorCode,
  type ClusterRequestOptions,
  type ClusterServer,
} from '@tachyon/server';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_ok: T) => {};

const server = await cluster({ workers: 'auto', port: 3000 }, () => {
  const app = new App();
  app.get('/', () => 'hi');
  app.ws('/live', {});
  expectType<Equal<typeof app.worker, number>>(true);
  expectType<Equal<typeof app.cluster, ClusterCounts>>(true);
  expectType<Equal<ReturnType<typeof app.cluster.subscribers>, number>>(true);
  expectType<Equal<typeof app.cluster.connections, number>>(true);
  return app;
});
expectType<Equal<typeof server, ClusterServer>>(true);
expectType<Equal<typeof server.port, number>>(true);
expectType<Equal<typeof server.workers, number>>(true);
expectType<Equal<typeof server.mode, 'acceptor' | 'reuseport' | 'in-process'>>(true);
await server.close();
await server.close({ timeout: 5000 });
// Draining one worker: from the primary's handle, or app.cluster.drain() in a worker.
expectType<Equal<ReturnType<ClusterServer['drain']>, Promise<void>>>(true);
await server.drain(2);
// @ts-expect-error a worker id is a number
void server.drain('2');
expectType<Equal<ReturnType<ClusterCounts['drain']>, Promise<void>>>(true);
// @ts-expect-error a worker id is a number
void new App().cluster.drain('1');

// An async factory is fine.
await cluster({ workers: 2 }, async () => new App());

const options: ClusterOptions = {
  workers: 4,
  host: '0.0.0.0',
  stallTimeout: 5000,
  shutdownTimeout: 10_000,
  signals: ['SIGTERM'],
  reusePort: true,
};
void options;

// @ts-expect-error: workers is a number or 'auto'
await cluster({ workers: 'all' }, () => new App());
// @ts-expect-error: the factory must return an App
await cluster({}, () => 'not an app');
// @ts-expect-error: a factory is required
await cluster({ workers: 2 });
// @ts-expect-error: read-only
server.port = 1;

// Requests between workers: app.cluster.request()/handle().
{
  const app = new App();
  app.cluster.handle('double', (n: number, fromWorker) => {
    expectType<Equal<typeof fromWorker, number>>(true);
    return n * 2;
  });
  app.cluster.handle('async', async () => ({ ok: true }));
  const reply = await app.cluster.request<number>(2, 'double', 21, { timeout: 1000 });
  expectType<Equal<typeof reply, number>>(true);
  const untyped = await app.cluster.request(0, 'async');
  expectType<Equal<typeof untyped, unknown>>(true);
  try {
    await app.cluster.request(1, 'x');
  } catch (err) {
    if (err instanceof ClusterRequestError) {
      expectType<Equal<typeof err.code, ClusterRequestErrorCode>>(true);
      expectType<Equal<typeof err.worker, number>>(true);
    }
  }
  const handler: ClusterHandler<string, string> = (s) => s.toUpperCase();
  app.cluster.handle('upper', handler);
  const options: ClusterRequestOptions = { timeout: 50 };
  void options;
  // @ts-expect-error: the worker is a number
  void app.cluster.request('2', 'double', 1);
  // @ts-expect-error: a handler is a function
  app.cluster.handle('double', 42);
  // @ts-expect-error: timeout is a number
  void app.cluster.request(1, 'x', 1, { timeout: '1s' });
}

// The App's side of a cluster (advanced, docs/cluster.md): what cluster() itself calls.
{
  const app = new App();
  expectType<Equal<typeof app.tls, boolean>>(true);
  const handed = await app.startForAcceptor(3000, '127.0.0.1');
  expectType<Equal<typeof handed.descriptor, number>>(true);
  expectType<Equal<typeof handed.server, Server>>(true);
  expectType<Equal<Awaited<ReturnType<typeof app.listenShared>>, Server>>(true);
  expectType<Equal<ReturnType<typeof app.abort>, void>>(true);
  const member = {} as ClusterMember;
  expectType<Equal<ReturnType<typeof app.joinCluster>, App>>(true);
  app.joinCluster(member);
  expectType<Equal<typeof member.worker, number>>(true);
  // @ts-expect-error: a ClusterMember, not a worker id
  app.joinCluster(2);
  // @ts-expect-error: read-only
  app.tls = true;
  // @ts-expect-error: read-only (a getter)
  app.worker = 3;
}
