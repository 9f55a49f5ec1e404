// The wire side of history (docs/protocol.md, "Positions" and "Recovery"): what a hostile
// client may send, the bytes of topics without history (unchanged), and what the memory
// store promises across a restart.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { App, type Bus } from '../../packages/server/src/index.ts';
import { natsBus } from '../../packages/nats/src/index.ts';
import { redisBus, redisHistory } from '../../packages/redis/src/index.ts';
import { rawClient, sleep, startServer, subscriber, waitFor } from './harness.ts';

test('a malformed since or last is denied with a clear reason and a log line; the socket keeps working', async () => {
  const s = await startServer();
  try {
    s.app.publish('room:x', 'n', 0);
    const c = await rawClient(s.url);
    const cases: [unknown, string][] = [
      [{ since: { offset: -1, epoch: 'abc' } }, 'invalid since'],
      [{ since: { offset: 1.5, epoch: 'abc' } }, 'invalid since'],
      [{ since: { offset: '3', epoch: 'abc' } }, 'invalid since'],
      [{ since: { offset: 2 ** 53, epoch: 'abc' } }, 'invalid since'],
      [{ since: { offset: 1 } }, 'invalid since'],
      [{ since: { offset: 1, epoch: 'a"b' } }, 'invalid since'],
      [{ since: { offset: 1, epoch: 'x'.repeat(65) } }, 'invalid since'],
      [{ since: 'yesterday' }, 'invalid since'],
      [{ since: null }, 'invalid since'],
      [{ last: 0 }, 'invalid last'],
      [{ last: -5 }, 'invalid last'],
      [{ last: 'all' }, 'invalid last'],
      [{ last: 1e12 }, 'invalid last'],
    ];
    let ref = 0;
    for (const [extra, reason] of cases) {
      c.send({ type: 'subscribe', topic: 'room:x', ref: ++ref, ...(extra as object) });
      assert.deepEqual(await c.next((m) => m.ref === ref), { type: 'denied', topic: 'room:x', ref, reason }, JSON.stringify(extra));
    }
    // A since is one topic's: never with `topics`.
    c.send({ type: 'subscribe', topics: ['room:x', 'room:y'], since: { offset: 0, epoch: 'abc' }, ref: 99 });
    assert.equal((await c.next((m) => m.ref === 99)).reason, 'invalid since');
    assert.equal((await c.next((m) => m.ref === 99)).reason, 'invalid since');
    assert.ok(s.log.filter((e) => e.level === 'warn' && /invalid (since|last)/.test(e.msg ?? '')).length >= cases.length + 1);
    // Still usable.
    c.send({ type: 'subscribe', topic: 'room:x', last: 1, ref: 100 });
    assert.equal((await c.next(() => true)).data, 0);
    assert.equal((await c.next(() => true)).ref, 100);
    c.close();
  } finally {
    await s.close();
  }
});

test("a since on a topic the route's subscribe hook refuses reads nothing: denied, not allowed", async () => {
  const s = await startServer();
  try {
    const c = await rawClient(s.url);
    c.send({ type: 'subscribe', topic: 'secret:1', since: { offset: 0, epoch: 'abc' }, ref: 1 });
    assert.deepEqual(await c.next(() => true), { type: 'denied', topic: 'secret:1', ref: 1, reason: 'not allowed' });
    c.send({ type: 'subscribe', topic: '__internal', last: 5, ref: 2 });
    assert.equal((await c.next(() => true)).reason, 'reserved topic');
    c.close();
  } finally {
    await s.close();
  }
});

test('topics without history keep their bytes exactly: no position, and since/last are ignored', async () => {
  const s = await startServer();
  try {
    const c = await rawClient(s.url);
    c.send({ type: 'subscribe', topic: 'plain', since: { offset: 3, epoch: 'abc' }, ref: 1 });
    assert.equal(await c.next(() => true).then(() => c.frames.at(-1)), '{"type":"subscribed","topic":"plain","ref":1}');
    s.app.publish('plain', 'chat', { text: 'hi' });
    await c.next((m) => m.event === 'chat');
    assert.equal(c.frames.at(-1), '{"topic":"plain","event":"chat","data":{"text":"hi"}}');
    c.send({ type: 'subscribe', topic: 'room:1', ref: 2 });
    const at = await c.next(() => true);
    assert.equal(c.frames.at(-1), `{"type":"subscribed","topic":"room:1","ref":2,"offset":0,"epoch":"${at.epoch}"}`);
    s.app.publish('room:1', 'chat', { text: 'hi' });
    s.app.publish('room:1', 'ping');
    await c.next((m) => m.event === 'ping');
    assert.deepEqual(c.frames.slice(-2), [
      `{"topic":"room:1","event":"chat","offset":1,"epoch":"${at.epoch}","data":{"text":"hi"}}`,
      `{"topic":"room:1","event":"ping","offset":2,"epoch":"${at.epoch}"}`,
    ]);
    c.close();
  } finally {
    await s.close();
  }
});

test('memory store: a restarted server has a new epoch, and the client is told recovered: false', async () => {
  const first = await startServer();
  const sub = await subscriber(first.url, 'room:r');
  first.app.publish('room:r', 'n', 1);
  await waitFor(() => sub.got.length === 1, 'live');
  const port = first.port;
  await first.close();
  const second = await startServer({ port });
  try {
    second.app.publish('room:r', 'n', 2);
    await waitFor(() => sub.infos.length === 2, 'resubscribed', 10_000);
    assert.equal(sub.infos[1]!.recovering, true);
    assert.equal(sub.infos[1]!.recovered, false);
    assert.notEqual(sub.infos[1]!.epoch, sub.infos[0]!.epoch);
    await sleep(30);
    assert.deepEqual(sub.got, [1], 'the lost message is not invented');
    assert.ok(second.log.some((e) => e.msg === 'history: recovery refused' && e.obj.reason === 'epoch'));
    sub.close();
  } finally {
    await second.close();
  }
});

test('history behind a bus without a shared store is refused when declared', () => {
  class OtherProcesses implements Bus {
    start() {}
    publish() {}
    interest() {}
    close() {}
  }
  const app = new App({ bus: new OtherProcesses() });
  assert.throws(() => app.topic('room:*', { history: { size: 10 } }), /needs a store all processes share/);
  app.topic('room:*', { presence: true });
});

test('a NATS-only app (no history store of its own) gets a clear error naming the fix; a shared store is accepted', async () => {
  const nats = new App({ bus: natsBus({ servers: 'nats://127.0.0.1:4222' }) });
  assert.throws(
    () => nats.topic('room:*', { history: { size: 10 } }),
    /history with a bus \(cluster\(\), Redis, NATS\) needs a store all processes share, e\.g\. .*redisHistory/,
  );
  const redis = new App({ bus: redisBus({ url: 'redis://127.0.0.1:1' }) });
  assert.throws(() => redis.topic('room:*', { history: { size: 10 } }), /redisHistory/);
  const store = redisHistory({ url: 'redis://127.0.0.1:1' });
  nats.topic('room:*', { history: { size: 10, store } });
  await store.close();
});
