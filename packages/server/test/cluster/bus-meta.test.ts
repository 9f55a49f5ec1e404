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

/** app.publish and socket.publish on `topic` from one worker: what each worker heard of it (new since the call). */
async function publishAndHear(topic: string): Promise<void> {
  const { byWorker, spare } = await clientOnEachWorker(cluster.port, 2);
  clients.push(...byWorker.values(), ...spare);
  const got = new Map<number, [string, unknown][]>();
  for (const [worker, client] of byWorker) {
    const list: [string, unknown][] = [];
    got.set(worker, list);
    client.subscribe(topic, (event, data) => list.push([event, data]));
  }
  await waitFor(
    async () => [...(await fromEachWorker(cluster.port, `/counts?topic=${topic}`, 2)).values()].every((a) => a.cluster === 2),
    5000,
    'both subscribers counted cluster-wide',
  );
  const on = (heard: Map<number, any>, w: number) => heard.get(w)!.heard.filter((h: { topic: string }) => h.topic === topic);
  const before = await fromEachWorker(cluster.port, '/heard', 2);
  await byWorker.get(1)!.request('say', { topic, n: 1 });
  const { body } = await get(cluster.port, `/publish?topic=${topic}`);
  const publisher: number = body.worker;
  // socket.publish skips its sender: worker 1's client gets the app's publish only (on a
  // history topic it was told its own message's position instead, so this is no gap).
  await waitFor(() => got.get(1)!.length === 1 && got.get(2)!.length === 2, 10_000, `every message (${JSON.stringify([...got])})`);
  assert.deepEqual(got.get(2)![0], ['said', { from: 1, i: 0 }], 'the browser gets the message alone');
  assert.deepEqual(got.get(1)![0]![0], 'tick', "the sender's client gets the app's publish, not its own message");

  const heard = await fromEachWorker(cluster.port, '/heard', 2);
  const expected = (worker: number) => [
    ...(worker === 2 ? [{ topic, worker: '1', event: 'said' }] : []),
    ...(worker !== publisher ? [{ topic, worker: String(publisher), event: 'tick' }] : []),
  ];
  for (const worker of [1, 2]) assert.deepEqual(on(heard, worker).slice(on(before, worker).length), expected(worker), `worker ${worker}`);
}

test('app.publish and socket.publish on one worker: the other worker hears their metadata', () => publishAndHear('traced'));

test('a history topic (the primary shared store): the positioned message carries the metadata to the other worker', () =>
  publishAndHear('hist:traced'));
