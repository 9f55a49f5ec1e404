// TopicBatches (realtime/batches.ts), the holding behind coalescePublishes, on its own with a
// recording send: deadlines per topic in the order topics were first held, a topic sent early
// and held again, the first onPublish metadata travelling with its frame, the per-iteration
// mode, shutdown, a send that publishes back, and idle topics swept. The WebSocket side is
// ws-tick.test.ts and ws-coalesce.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BusMeta } from '../../src/realtime/bus/index.ts';
import { TopicBatches } from '../../src/realtime/batches.ts';
import { eventually, sleep } from '../helpers.ts';

interface Sent {
  topic: string;
  frame: string;
  meta: BusMeta | undefined;
  at: number;
}

function recording(tick: number) {
  const sent: Sent[] = [];
  const t0 = performance.now();
  const batches = new TopicBatches((topic, frame, meta) => sent.push({ topic, frame, meta, at: performance.now() - t0 }), tick);
  return { sent, batches, t0 };
}

test('tick: each topic leaves a tick after its first held envelope, one frame (an array when several), in deadline order', async () => {
  const { sent, batches } = recording(100);
  batches.add('a', '{"n":1}', undefined);
  await sleep(40);
  batches.add('b', '{"n":2}', undefined);
  batches.add('a', '{"n":3}', undefined);
  await eventually(() => sent.length === 2, 2000);
  assert.deepEqual(
    sent.map((s) => [s.topic, s.frame]),
    [
      ['a', '[{"n":1},{"n":3}]'],
      ['b', '{"n":2}'],
    ],
  );
  assert.ok(sent[0]!.at >= 99, `a after ${sent[0]!.at.toFixed(0)} ms`);
  // b's own deadline (held at 40 ms or later, so due at 140 or later), not a's (100): lower
  // bounds only, which a late timer cannot break.
  assert.ok(sent[1]!.at >= 139, `a at ${sent[0]!.at.toFixed(0)} ms, b at ${sent[1]!.at.toFixed(0)} ms`);
  await sleep(150);
  assert.equal(sent.length, 2, 'nothing sent twice');
});

test('tick: a topic sent early and held again waits a whole tick from its new first envelope; its old place in the queue is skipped', async () => {
  const { sent, batches } = recording(100);
  batches.add('t', 'old', undefined);
  await sleep(20);
  batches.add('u', 'u1', undefined);
  batches.flushTopic('t');
  assert.deepEqual(
    sent.map((s) => s.frame),
    ['old'],
  );
  const again = performance.now();
  batches.add('t', 'new', undefined);
  await eventually(() => sent.length === 3, 2000);
  assert.deepEqual(
    sent.map((s) => [s.topic, s.frame]),
    [
      ['t', 'old'],
      ['u', 'u1'],
      ['t', 'new'],
    ],
  );
  assert.ok(performance.now() - again >= 99, 't was sent by its old deadline');
  // Flushing a topic with nothing held, or one never seen, sends nothing.
  batches.flushTopic('t');
  batches.flushTopic('never');
  assert.equal(sent.length, 3);
});

test("the first onPublish metadata of what is held travels with the frame, and the next batch's is its own", async () => {
  const { sent, batches } = recording(0);
  const first: BusMeta = { trace: '1' };
  const second: BusMeta = { trace: '2' };
  batches.add('t', 'a', undefined);
  batches.add('t', 'b', first);
  batches.add('t', 'c', second);
  batches.add('u', 'x', undefined);
  await eventually(() => sent.length === 2, 2000);
  assert.deepEqual(
    sent.map((s) => [s.topic, s.frame, s.meta]),
    [
      ['t', '[a,b,c]', first],
      ['u', 'x', undefined],
    ],
  );
  batches.add('t', 'd', undefined);
  await eventually(() => sent.length === 3, 2000);
  assert.equal(sent[2]!.meta, undefined, 'no metadata left over from the last batch');
});

test('per iteration (no tick): everything held leaves after the iteration, topics in the order first held', async () => {
  const { sent, batches } = recording(0);
  batches.add('b', '1', undefined);
  batches.add('a', '2', undefined);
  batches.add('b', '3', undefined);
  assert.equal(sent.length, 0, 'held until the end of the iteration');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(
    sent.map((s) => [s.topic, s.frame]),
    [
      ['b', '[1,3]'],
      ['a', '2'],
    ],
  );
});

test('flushAll sends everything held at once and stops the timer', async () => {
  const { sent, batches } = recording(1000);
  batches.add('a', '1', undefined);
  batches.add('b', '2', undefined);
  batches.flushAll();
  assert.deepEqual(
    sent.map((s) => s.frame),
    ['1', '2'],
  );
  await sleep(50);
  batches.add('a', '3', undefined);
  batches.flushAll();
  assert.deepEqual(
    sent.map((s) => s.frame),
    ['1', '2', '3'],
  );
});

test('a send that publishes to the same topic starts a new batch with its own deadline', async () => {
  const sent: string[] = [];
  let echoed = false;
  const batches: TopicBatches = new TopicBatches((topic, frame) => {
    sent.push(frame);
    if (!echoed) {
      echoed = true;
      batches.add(topic, 'echo', undefined);
    }
  }, 50);
  batches.add('t', 'first', undefined);
  await eventually(() => sent.length === 2, 2000);
  assert.deepEqual(sent, ['first', 'echo']);
});

test('idle topics are swept: their batch objects go, and a topic published again afterwards is held and sent as before', async () => {
  const { sent, batches } = recording(50);
  batches.add('idle', 'once', undefined);
  batches.add('busy', 'tick', undefined);
  // A busy topic keeps the timer (and so the sweep rounds) going for two rounds and more.
  const busy = setInterval(() => batches.add('busy', 'tick', undefined), 60);
  try {
    await eventually(() => sent.some((s) => s.topic === 'idle'), 2000);
    assert.equal(batches.kept, 2);
    await eventually(() => batches.kept === 1, 5000);
    batches.add('idle', 'again', undefined);
    assert.equal(batches.kept, 2);
    await eventually(() => sent.filter((s) => s.topic === 'idle').length === 2, 2000);
    assert.deepEqual(
      sent.filter((s) => s.topic === 'idle').map((s) => s.frame),
      ['once', 'again'],
    );
  } finally {
    clearInterval(busy);
  }
});
