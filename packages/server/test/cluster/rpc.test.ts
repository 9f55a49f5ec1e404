// core/rpc.ts, the request/reply primitive under app.cluster.request() and the cluster's
// exchanges with its primary, over a real MessageChannel (the ports structured-clone like the
// ones between threads): replies, each error code, a peer that goes away, close(). And
// app.joinCluster()'s guards: once, before the app starts.
import assert from 'node:assert/strict';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { test } from 'node:test';
import { App, ClusterRequestError, type ClusterMember } from '../../src/index.ts';
import { isRpcMessage, Rpc, type RpcMessage } from '../../src/core/rpc.ts';

/** Two Rpcs, peers 1 and 2, over one MessageChannel. */
function pair(): { one: Rpc; two: Rpc; close: () => void } {
  const { port1, port2 } = new MessageChannel();
  const over = (port: MessagePort) => (_to: number, message: RpcMessage) => (port.postMessage(message), true);
  const one = new Rpc(1, over(port1));
  const two = new Rpc(2, over(port2));
  port1.on('message', (m: unknown) => isRpcMessage(m) && one.receive(2, m));
  port2.on('message', (m: unknown) => isRpcMessage(m) && two.receive(1, m));
  return { one, two, close: () => port1.close() };
}

const rejects = (p: Promise<unknown>, code: string, message: RegExp) =>
  assert.rejects(p, (err: unknown) => err instanceof ClusterRequestError && err.code === code && message.test(err.message));

test('a request crosses the port and its reply comes back; each failure rejects with its code', async () => {
  const { one, two, close } = pair();
  try {
    two.handle('double', (n: number, from) => ({ twice: n * 2, from }));
    two.handle('fail', () => {
      throw new Error('broke');
    });
    two.handle('never', () => new Promise(() => {}));
    two.handle('bad-reply', () => ({ fn: () => 1 }));
    assert.deepEqual(await one.request(2, 'double', 21), { twice: 42, from: 1 });
    await rejects(one.request(2, 'nobody'), 'NO_HANDLER', /^worker 2 has no handler for "nobody"$/);
    await rejects(one.request(2, 'fail'), 'HANDLER_ERROR', /^broke$/);
    await rejects(
      one.request(2, 'double', () => 1),
      'NOT_CLONEABLE',
      /the data cannot be sent to worker 2/,
    );
    await rejects(one.request(2, 'bad-reply'), 'NOT_CLONEABLE', /reply of worker 2 to "bad-reply" cannot be sent/);
    await rejects(one.request(2, 'never', undefined, { timeout: 30 }), 'TIMEOUT', /^worker 2 did not answer "never" within 30 ms$/);
    // Both ways over the same port, and to itself (a loopback with the same copies).
    one.handle('echo', (d: { n: number }) => ((d.n += 1), d));
    assert.deepEqual(await two.request(1, 'echo', { n: 1 }), { n: 2 });
    const sent = { n: 1 };
    assert.deepEqual(await one.request(1, 'echo', sent), { n: 2 });
    assert.equal(sent.n, 1, 'the handler got a copy');
  } finally {
    close();
  }
});

test('a peer that goes away, a peer that is not there, and close()', async () => {
  const { one, two, close } = pair();
  try {
    two.handle('never', () => new Promise(() => {}));
    const pending = one.request(2, 'never');
    await new Promise((r) => setTimeout(r, 10));
    one.peerGone(2);
    await rejects(pending, 'WORKER_GONE', /^worker 2 stopped before answering "never"$/);
    const absent = new Rpc(1, () => false);
    await rejects(absent.request(3, 'x'), 'WORKER_GONE', /^worker 3 is not running/);
    const waiting = one.request(2, 'never');
    one.close();
    await rejects(waiting, 'WORKER_GONE', /closed before the reply/);
    await rejects(one.request(2, 'never'), 'WORKER_GONE', /closing/);
    // A late reply after the timeout is dropped, not delivered to a later request.
    two.handle('slow', () => new Promise((r) => setTimeout(() => r('late'), 40)));
    const fresh = pair();
    fresh.two.handle('slow', () => new Promise((r) => setTimeout(() => r('late'), 40)));
    fresh.two.handle('now', () => 'now');
    await rejects(fresh.one.request(2, 'slow', undefined, { timeout: 10 }), 'TIMEOUT', /within 10 ms/);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(await fresh.one.request(2, 'now'), 'now');
    fresh.close();
  } finally {
    close();
  }
});

test('app.joinCluster(): once, and before the app starts; a bad member fails clearly', async () => {
  const member = (worker: number): ClusterMember => ({
    worker,
    workers: 2,
    history: undefined,
    bus: (own) => own ?? { start() {}, publish() {}, interest() {}, close() {} },
    connect: (rpc) => rpc.connect(worker, () => false),
    linkMetrics: () => async () => ({ parts: [], missing: [] }),
  });
  const app = new App();
  app.topic('room:*', { history: { size: 10 } });
  // A memory history behind a bus would number topics per process: refused on joining too.
  assert.throws(() => app.joinCluster(member(1)), /history with a bus .* needs a store all processes share/);
  assert.equal(app.worker, 0, 'a failed join leaves the app as it was');
  const joined = new App();
  joined.cluster.handle('who', () => joined.worker);
  assert.equal(joined.joinCluster(member(2)), joined);
  assert.equal(joined.worker, 2);
  assert.equal(joined.cluster.worker, 2);
  assert.equal(joined.cluster.workers, 2);
  assert.equal(await joined.cluster.request(2, 'who'), 2, 'a handler registered before joining answers after');
  await rejects(joined.cluster.request(1, 'who'), 'WORKER_GONE', /worker 1 is not running/);
  assert.throws(() => joined.joinCluster(member(2)), /already joined a cluster/);
  const started = new App();
  await started.request('/');
  assert.throws(() => started.joinCluster(member(1)), /must be called before the app starts/);
  await started.close();
  await joined.close();
});
