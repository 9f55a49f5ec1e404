// onPublish metadata across cluster() workers (the MessagePort mesh): what one worker's
// publish carried comes out of the other workers' onDeliver, never back to the publisher, and
// the browsers get the message as always (docs/hooks.md).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Live } from '../../../client/src/index.ts';
import { clientOnEachWorker, fromEachWorker, get, startCluster, waitFor, type Cluster } from './harness.ts';

let cluster: Cluster;
const clients: Live[] = [];
before(async () => {
  cluster = await startCluster({ WORKERS: '2', BUS_META: '1' });
});
after(async () => {
  for (const c of clients) c.close();
  await cluster?.stop();
});

test('app.publish and socket.publish on one worker: the other worker hears their metadata', async () => {
  const { byWorker, spare } = await clientOnEachWorker(cluster.port, 2);
  clients.push(...byWorker.values(), ...spare);
  const got = new Map<number, unknown[]>();
  for (const [worker, client] of byWorker) {
    const list: unknown[] = [];
    got.set(worker, list);
    client.subscribe('traced', (event, data) => list.push([event, data]));
  }
  await waitFor(
    async () => [...(await fromEachWorker(cluster.port, '/counts?topic=traced', 2)).values()].every((a) => a.cluster === 2),
    5000,
    'both subscribers counted cluster-wide',
  );
  await byWorker.get(1)!.request('say', { topic: 'traced', n: 1 });
  const { body } = await get(cluster.port, '/publish?topic=traced');
  const publisher: number = body.worker;
  // socket.publish skips its sender: worker 1's client gets the app's publish only.
  await waitFor(() => got.get(1)!.length === 1 && got.get(2)!.length === 2, 5000, 'every message');
  assert.deepEqual(got.get(2)![0], ['said', { from: 1, i: 0 }], 'the browser gets the message alone');

  const heard = await fromEachWorker(cluster.port, '/heard', 2);
  const expected = (worker: number) => [
    ...(worker === 2 ? [{ topic: 'traced', worker: '1', event: 'said' }] : []),
    ...(worker !== publisher ? [{ topic: 'traced', worker: String(publisher), event: 'tick' }] : []),
  ];
  for (const worker of [1, 2]) assert.deepEqual(heard.get(worker)!.heard, expected(worker), `worker ${worker}`);
});

test('a history topic (the primary shared store): the positioned message carries the metadata to the other worker', async () => {
  const { byWorker, spare } = await clientOnEachWorker(cluster.port, 2);
  clients.push(...byWorker.values(), ...spare);
  const got = new Map<number, unknown[]>();
  for (const [worker, client] of byWorker) {
    const list: unknown[] = [];
    got.set(worker, list);
    client.subscribe('hist:traced', (event, data) => list.push([event, data]));
  }
  await waitFor(
    async () => [...(await fromEachWorker(cluster.port, '/counts?topic=hist:traced', 2)).values()].every((a) => a.cluster === 2),
    5000,
    'both subscribers counted cluster-wide',
  );
  const before = await fromEachWorker(cluster.port, '/heard', 2);
  const count = (w: number, from: Map<number, any>) =>
    from.get(w)!.heard.filter((h: { topic: string }) => h.topic === 'hist:traced').length;
  await byWorker.get(1)!.request('say', { topic: 'hist:traced', n: 1 });
  const { body } = await get(cluster.port, '/publish?topic=hist:traced');
  const publisher: number = body.worker;
  await waitFor(() => got.get(1)!.length === 1 && got.get(2)!.length === 2, 5000, 'every message');
  assert.deepEqual(got.get(2)![0], ['said', { from: 1, i: 0 }], 'the browser gets the message alone');

  const heard = await fromEachWorker(cluster.port, '/heard', 2);
  const fresh = (w: number) =>
    heard
      .get(w)!
      .heard.filter((h: { topic: string }) => h.topic === 'hist:traced')
      .slice(count(w, before));
  const expected = (worker: number) => [
    ...(worker === 2 ? [{ topic: 'hist:traced', worker: '1', event: 'said' }] : []),
    ...(worker !== publisher ? [{ topic: 'hist:traced', worker: String(publisher), event: 'tick' }] : []),
  ];
  for (const worker of [1, 2]) assert.deepEqual(fresh(worker), expected(worker), `worker ${worker}`);
});
