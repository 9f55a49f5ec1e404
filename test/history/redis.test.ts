// The history suite on redisHistory() against a real redis-server, and what only a store
// outside the process can do: recovery across a server restart, and a lost history (the
// keys evicted) turning into a new epoch.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@redis/client';
import { redisHistory } from '../../packages/redis/src/index.ts';
import { RedisBroker } from '../buses/brokers.ts';
import { range, sleep, startServer, subscriber, waitFor } from './harness.ts';
import { historySuite } from './suite.ts';

let broker: RedisBroker;
let n = 0;

historySuite({
  name: 'redis',
  async before() {
    broker = await RedisBroker.start();
  },
  async after() {
    await broker.dispose();
  },
  // A prefix per server: each test starts from an empty history.
  store: () => redisHistory({ url: broker.url, prefix: `t${n++}:` }),
});

describe('history (redis): beyond one process', () => {
  let redis: RedisBroker;
  before(async () => {
    redis = await RedisBroker.start();
  });
  after(async () => {
    await redis.dispose();
  });

  test('recovery works across a server restart: the new server replays what the client missed', async () => {
    const first = await startServer({ store: redisHistory({ url: redis.url }) });
    const port = first.port;
    const sub = await subscriber(first.url, 'room:restart');
    for (let i = 0; i < 10; i++) first.app.publish('room:restart', 'n', i);
    await waitFor(() => sub.got.length === 10, 'live');
    await first.close();
    // The new process (a deploy): same Redis, same port, history intact.
    const second = await startServer({ store: redisHistory({ url: redis.url }), port });
    try {
      for (let i = 10; i < 60; i++) second.app.publish('room:restart', 'n', i);
      await waitFor(() => sub.infos.length === 2, 'resubscribed', 10_000);
      assert.equal(sub.infos[1]!.recovered, true);
      await waitFor(() => sub.got.length === 60, 'replayed');
      second.app.publish('room:restart', 'n', 60);
      await waitFor(() => sub.got.length === 61, 'live');
      await sleep(50);
      assert.deepEqual(sub.got, range(0, 61));
      sub.close();
    } finally {
      await second.close();
    }
  });

  test('a lost history (keys deleted, as an eviction would) is a new epoch: recovery refused, then it resumes', async () => {
    const s = await startServer({ store: redisHistory({ url: redis.url, prefix: 'evict:' }) });
    const admin = createClient({ url: redis.url });
    await admin.connect();
    try {
      const sub = await subscriber(s.url, 'room:evict');
      s.app.publish('room:evict', 'n', 0);
      await waitFor(() => sub.got.length === 1, 'live');
      const epoch = sub.infos[0]!.epoch;
      await admin.del(['evict:{room:evict}:m', 'evict:{room:evict}:s']);
      s.dropAll();
      await waitFor(() => sub.infos.length === 2, 'resubscribed');
      assert.equal(sub.infos[1]!.recovered, false);
      assert.notEqual(sub.infos[1]!.epoch, epoch);
      assert.equal(sub.infos[1]!.offset, 0);
      s.app.publish('room:evict', 'n', 1);
      await waitFor(() => sub.got.length === 2, 'live in the new epoch');
      s.dropAll();
      s.app.publish('room:evict', 'n', 2);
      await waitFor(() => sub.infos.length === 3 && sub.got.length === 3, 'recovered in the new epoch');
      assert.equal(sub.infos[2]!.recovered, true);
      sub.close();
    } finally {
      admin.destroy();
      await s.close();
    }
  });

  test('kept(): the messages a late subscriber would get (size, ttl), and app.topicStats() shows them', async () => {
    const store = redisHistory({ url: redis.url, prefix: 'kept:' });
    try {
      const sized = { size: 5 };
      assert.equal(await store.kept('room:none', sized), 0, 'a topic never published to');
      for (let i = 0; i < 8; i++) await store.append('room:sized', 'n', String(i), sized);
      assert.equal(await store.kept('room:sized', sized), 5);
      const timed = { size: 5, ttl: 150 };
      for (let i = 0; i < 3; i++) await store.append('room:timed', 'n', String(i), timed);
      assert.equal(await store.kept('room:timed', timed), 3);
      await sleep(250);
      assert.equal(await store.kept('room:timed', timed), 0, 'past the ttl');
      assert.equal(await store.kept('room:none', sized), 0, 'reading created nothing');
    } finally {
      await store.close();
    }
    const server = await startServer({ store: redisHistory({ url: redis.url, prefix: 'kept-app:' }) });
    try {
      const sub = await subscriber(server.url, 'room:stats');
      for (let i = 0; i < 4; i++) server.app.publish('room:stats', 'n', i);
      await waitFor(() => sub.got.length === 4, 'live');
      assert.equal((await server.app.topicStats('room:stats')).history, 4);
      sub.close();
    } finally {
      await server.close();
    }
  });

  test('two servers on one Redis number a topic together: offsets are gap-free across servers', async () => {
    const a = await startServer({ store: redisHistory({ url: redis.url, prefix: 'two:' }) });
    const b = await startServer({ store: redisHistory({ url: redis.url, prefix: 'two:' }) });
    try {
      for (let i = 0; i < 20; i++) (i % 2 ? a : b).app.publish('room:two', 'n', i);
      await sleep(100);
      const late = await subscriber(a.url, 'room:two', { last: 100 });
      assert.equal(late.got.length, 20);
      assert.equal(late.infos[0]!.offset, 20);
      late.close();
    } finally {
      await a.close();
      await b.close();
    }
  });
});
