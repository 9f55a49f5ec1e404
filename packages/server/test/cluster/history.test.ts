// History in a cluster(): every worker numbers a topic through the primary's memory store, so
// a client recovers whichever worker it reconnects to (2 workers, real sockets).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fromEachWorker, get, startCluster, waitFor, type Cluster } from './harness.ts';
import { rawClient } from '../../../../test/history/harness.ts';

let cluster: Cluster;
before(async () => {
  cluster = await startCluster({ WORKERS: '2' });
});
after(async () => {
  await cluster?.stop();
});

test('publishes from every worker get one gap-free numbering; a client recovers on any worker', async () => {
  const url = `ws://127.0.0.1:${cluster.port}/live`;
  const first = await rawClient(url);
  first.send({ type: 'subscribe', topic: 'hist:1', ref: 1 });
  const at = await first.next((m) => m.type === 'subscribed');
  assert.equal(at.offset, 0);
  first.close();
  // Publish from both workers while nobody listens.
  const from = new Set<number>();
  for (let i = 0; i < 20 && from.size < 2; i++) from.add((await get(cluster.port, '/publish?topic=hist:1&n=5')).body.worker);
  assert.equal(from.size, 2, 'both workers published');
  const probe = await rawClient(url);
  probe.send({ type: 'subscribe', topic: 'hist:1', ref: 1 });
  const total = (await probe.next((m) => m.type === 'subscribed')).offset;
  probe.close();
  assert.ok(total >= 10 && total % 5 === 0, `${total} publishes numbered`);
  // Reconnect (to either worker, several times) and resume.
  for (let k = 0; k < 4; k++) {
    const again = await rawClient(url);
    again.send({ type: 'subscribe', topic: 'hist:1', since: { offset: 0, epoch: at.epoch }, ref: 2 });
    const answer = await again.next((m) => m.type === 'subscribed');
    assert.equal(answer.recovered, true);
    const offsets = again.frames
      .map((f) => JSON.parse(f))
      .filter((m) => m.event === 'tick')
      .map((m) => m.offset);
    assert.deepEqual(
      offsets,
      Array.from({ length: total }, (_, i) => i + 1),
      'every publish once, in order',
    );
    again.close();
  }
});

test('a live subscriber on one worker gets the positions of publishes made on the other', async () => {
  const url = `ws://127.0.0.1:${cluster.port}/live`;
  const c = await rawClient(url);
  c.send({ type: 'subscribe', topic: 'hist:live', ref: 1 });
  await c.next((m) => m.type === 'subscribed');
  await waitFor(
    async () => {
      const answers = await fromEachWorker(cluster.port, '/counts?topic=hist:live', 2);
      return [...answers.values()].every((a) => a.cluster === 1);
    },
    5000,
    'the subscriber counted everywhere',
  );
  const from = new Set<number>();
  let requests = 0;
  for (; requests < 20 && from.size < 2; requests++) from.add((await get(cluster.port, '/publish?topic=hist:live&n=3')).body.worker);
  assert.equal(from.size, 2);
  const n = 3 * requests;
  await waitFor(() => c.frames.filter((f) => f.includes('"event":"tick"')).length >= n, 5000, 'ticks');
  const offsets = c.frames
    .map((f) => JSON.parse(f))
    .filter((m) => m.event === 'tick')
    .map((m) => m.offset)
    .sort((a, b) => a - b);
  assert.deepEqual(
    offsets,
    Array.from({ length: n }, (_, i) => i + 1),
    'each once, numbered 1..n across both workers',
  );
  c.close();
});

test('kept() through the primary: every worker tells the same count (app.topicStats(), the dashboard column)', async () => {
  for (let i = 0; i < 3; i++) await get(cluster.port, '/publish?topic=kept:1&n=2');
  const stats = await fromEachWorker(cluster.port, '/topic-stats?topic=kept:1', 2);
  assert.equal(stats.size, 2);
  for (const [worker, s] of stats) assert.equal(s.history, 3, `worker ${worker}: 6 published, size 3`);
  const none = await fromEachWorker(cluster.port, '/topic-stats?topic=kept:none', 2);
  for (const [worker, s] of none) assert.equal(s.history, 0, `worker ${worker}: a topic never published to`);
});
