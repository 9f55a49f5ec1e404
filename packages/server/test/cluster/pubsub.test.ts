// Requests and publishes across the worker threads of one cluster (3 workers, real sockets).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Live } from '../../../client/src/index.ts';
import { clientOnEachWorker, fromEachWorker, get, startCluster, waitFor, type Cluster } from './harness.ts';

let cluster: Cluster;
const clients: Live[] = [];
before(async () => {
  cluster = await startCluster({ WORKERS: '3' });
});
after(async () => {
  for (const c of clients) c.close();
  await cluster?.stop();
});

/** Waits until every worker counts `expected` subscribers of `topic` cluster-wide. */
async function clusterCount(topic: string, expected: number): Promise<void> {
  await waitFor(
    async () => {
      const answers = await fromEachWorker(cluster.port, `/counts?topic=${topic}`, 3);
      return [...answers.values()].every((a) => a.cluster === expected);
    },
    5000,
    `${expected} subscribers of ${topic} in every worker`,
  );
}

test('one port, requests spread over every worker, each tagged with its worker', async () => {
  assert.equal(cluster.workers, 3);
  assert.equal(cluster.mode, 'acceptor');
  const answers = await fromEachWorker(cluster.port, '/who', 3, 12);
  assert.deepEqual([...answers.keys()].sort(), [1, 2, 3]);
  assert.equal(new Set([...answers.values()].map((a) => a.thread)).size, 3, 'three threads');
});

test("the app's log lines carry its worker id", async () => {
  const { body } = await get(cluster.port, '/log');
  await waitFor(() => cluster.lines.some((l) => l?.msg === 'a line from the app'), 5000, 'the log line');
  const line = cluster.lines.find((l) => l?.msg === 'a line from the app');
  assert.equal(line.worker, body.worker);
  assert.equal(line.level, 'warn');
});

test('socket.publish on one worker reaches the subscribers on every worker once, in order', async () => {
  const { byWorker, spare } = await clientOnEachWorker(cluster.port, 3);
  clients.push(...byWorker.values(), ...spare);
  const got = new Map<number, unknown[]>();
  for (const [worker, client] of byWorker) {
    if (worker === 1) continue; // worker 1's client publishes
    const list: unknown[] = [];
    got.set(worker, list);
    client.subscribe('room', (_event, data) => list.push(data));
  }
  await clusterCount('room', 2);
  const n = 200;
  await byWorker.get(1)!.request('say', { topic: 'room', n });
  await waitFor(() => [...got.values()].every((l) => l.length >= n), 5000, 'every delivery');
  await new Promise((r) => setTimeout(r, 200)); // duplicates would arrive by now
  const expected = Array.from({ length: n }, (_, i) => ({ from: 1, i }));
  for (const [worker, list] of got) assert.deepEqual(list, expected, `worker ${worker}: each message once, in order`);
});

test('large messages for several workers (shared memory, copied once) arrive intact and in order', async () => {
  const { byWorker, spare } = await clientOnEachWorker(cluster.port, 3);
  clients.push(...byWorker.values(), ...spare);
  const got = new Map<number, any[]>();
  for (const worker of [2, 3]) {
    const list: any[] = [];
    got.set(worker, list);
    byWorker.get(worker)!.subscribe('big', (_e, d) => list.push(d));
  }
  await clusterCount('big', 2);
  const pad = 'é'.repeat(3000); // 6,000 UTF-8 bytes: above the 1 KiB sharing threshold
  await byWorker.get(1)!.request('say', { topic: 'big', n: 20, pad });
  await waitFor(() => [...got.values()].every((l) => l.length >= 20), 5000, 'every delivery');
  for (const list of got.values())
    assert.deepEqual(
      list,
      Array.from({ length: 20 }, (_, i) => ({ from: 1, i, pad })),
    );
});

test('app.publish reaches subscribers in the other workers; cluster-wide counts beside local ones', async () => {
  const { byWorker, spare } = await clientOnEachWorker(cluster.port, 3);
  clients.push(...byWorker.values(), ...spare);
  const got = new Map<number, unknown[]>();
  for (const [worker, client] of byWorker) {
    const list: unknown[] = [];
    got.set(worker, list);
    client.subscribe('news', (_event, data) => list.push(data));
  }
  await clusterCount('news', 3);
  const counts = await fromEachWorker(cluster.port, '/counts?topic=news', 3);
  for (const c of counts.values()) {
    assert.equal(c.local, 1, 'one subscriber in each worker');
    assert.ok(c.clusterConnections >= 3 && c.clusterConnections > c.connections, 'cluster connections sum the workers');
  }
  const { body } = await get(cluster.port, '/publish?topic=news&n=50');
  await waitFor(() => [...got.values()].every((l) => l.length >= 50), 5000, 'every delivery');
  await new Promise((r) => setTimeout(r, 200));
  for (const list of got.values())
    assert.deepEqual(
      list,
      Array.from({ length: 50 }, (_, i) => ({ from: body.worker, i })),
    );
});

test('interest tracking: a worker with no subscriber of a topic is sent none of its messages', async () => {
  const { byWorker, spare } = await clientOnEachWorker(cluster.port, 3);
  clients.push(...byWorker.values(), ...spare);
  const only = byWorker.get(2)!;
  const list: unknown[] = [];
  only.subscribe('lonely', (_e, d) => list.push(d));
  await clusterCount('lonely', 1);
  const before = new Map<number, any>();
  for (const [w, c] of byWorker) before.set(w, await c.request('stats'));
  await byWorker.get(1)!.request('say', { topic: 'lonely', n: 30 });
  await byWorker.get(3)!.request('say', { topic: 'lonely', n: 30 });
  await waitFor(() => list.length >= 60, 5000, 'deliveries on worker 2');
  await new Promise((r) => setTimeout(r, 200));
  const received = async (w: number) => ((await byWorker.get(w)!.request('stats')) as any).received - before.get(w).received;
  assert.equal(await received(2), 60, 'worker 2 got every message once');
  assert.equal(await received(1), 0, 'worker 1 was sent nothing');
  assert.equal(await received(3), 0, 'worker 3 was sent nothing');
  assert.equal(list.length, 60);
  // The last subscriber leaves: the others stop sending.
  only.close();
  await clusterCount('lonely', 0);
  const sent = ((await byWorker.get(1)!.request('stats')) as any).sent;
  await byWorker.get(1)!.request('say', { topic: 'lonely', n: 10 });
  assert.equal(((await byWorker.get(1)!.request('stats')) as any).sent, sent, 'nothing sent for a topic nobody watches');
});

test('coalescePublishes across workers: one frame per topic per turn reaches the other workers, order kept', async () => {
  const coalescing = await startCluster({ WORKERS: '3', COALESCE: '1' });
  const { byWorker, spare } = await clientOnEachWorker(coalescing.port, 3);
  try {
    const got = new Map<number, unknown[]>();
    for (const [worker, client] of byWorker) {
      const list: unknown[] = [];
      got.set(worker, list);
      client.subscribe('batched', (_e, d) => list.push(d));
    }
    await waitFor(
      async () => [...(await fromEachWorker(coalescing.port, '/counts?topic=batched', 3)).values()].every((a) => a.cluster === 3),
      5000,
      'subscriptions',
    );
    const publisher = await fromEachWorker(coalescing.port, '/who', 3);
    assert.equal(publisher.size, 3);
    const { body } = await get(coalescing.port, '/publish?topic=batched&n=50');
    const stats = (await byWorker.get(body.worker)!.request('stats')) as any;
    await waitFor(() => [...got.values()].every((l) => l.length >= 50), 5000, 'every delivery');
    await new Promise((r) => setTimeout(r, 200));
    for (const list of got.values())
      assert.deepEqual(
        list,
        Array.from({ length: 50 }, (_, i) => ({ from: body.worker, i })),
      );
    // The publishing worker's first sends: the 50 publishes as one batch frame to each of the two others.
    assert.equal(stats.sent, 2);
  } finally {
    for (const c of [...byWorker.values(), ...spare]) c.close();
    await coalescing.stop();
  }
});
