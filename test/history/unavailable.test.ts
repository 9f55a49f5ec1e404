// A history store that is briefly down (Redis restarting) must not end a subscription: the
// server answers `denied` with reason `unavailable` (docs/protocol.md), and @tachyon/client
// keeps the topic and subscribes again after its backoff until the store answers. Real
// redis-server (SIGKILLed and restarted on its port), real server, real client.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connect, type ClientError, type SubscribeInfo } from '../../packages/client/src/index.ts';
import { redisHistory } from '../../packages/redis/src/index.ts';
import { App } from '../../packages/server/src/index.ts';
import { RedisBroker } from '../buses/brokers.ts';
import { rawClient, sleep, waitFor } from './harness.ts';

let broker: RedisBroker;
let n = 0;
before(async () => {
  broker = await RedisBroker.start();
});
after(async () => {
  await broker.dispose();
});

/**
 * `room:*` keeps its history in Redis; the route's subscribe hook counts the subscribes of each
 * topic (every subscribe frame runs it, before the store is read) and throws on `boom:*`.
 */
async function start() {
  const store = redisHistory({ url: broker.url, prefix: `u${n++}:` });
  const log: { level: string; msg?: string }[] = [];
  const make = (level: string) => (_obj: unknown, msg?: string) => void log.push({ level, msg });
  const app = new App({ logger: { error: make('error'), warn: make('warn'), info: make('info'), debug: make('debug') } as never });
  app.topic('room:*', { history: { size: 100, store } });
  const hooked = new Map<string, number>();
  const sockets = new Set<{ terminate(): void }>();
  app.ws('/live', {
    open: (ws) => void sockets.add(ws),
    close: (ws) => void sockets.delete(ws),
    subscribe: (_ws, topic) => {
      hooked.set(topic, (hooked.get(topic) ?? 0) + 1);
      if (topic.startsWith('boom:')) throw new Error('a bug in the hook');
      return true;
    },
  });
  const server = await app.listen(0, '127.0.0.1');
  return {
    app,
    store,
    log,
    url: `ws://127.0.0.1:${server.port}/live`,
    /** Subscribe frames the server got for `topic`. */
    subscribes: (topic: string) => hooked.get(topic) ?? 0,
    readFailures: () => log.filter((e) => e.level === 'error' && /store read failed/.test(e.msg ?? '')).length,
    dropAll: () => {
      for (const s of [...sockets]) s.terminate();
    },
    close: () => app.close({ timeout: 500 }),
  };
}

/** Stops Redis and waits until the store knows (its reads then fail at once). */
async function redisDown(store: ReturnType<typeof redisHistory>): Promise<void> {
  await broker.stop();
  await waitFor(() => !store.stats().connected, 'the store sees Redis gone', 10_000);
}

async function redisUp(store: ReturnType<typeof redisHistory>): Promise<void> {
  await broker.start();
  // The store's own reconnect backoff reaches 5 s between attempts.
  await waitFor(() => store.stats().connected, 'the store reconnects', 20_000);
}

test('protocol: a failed store read is denied `unavailable`, a throwing subscribe hook `error`; both logged', async () => {
  const s = await start();
  try {
    const c = await rawClient(s.url);
    c.send({ type: 'subscribe', topic: 'room:1', ref: 1 });
    assert.equal((await c.next((m) => m.ref === 1)).type, 'subscribed', 'Redis up: subscribed');
    await redisDown(s.store);
    c.send({ type: 'subscribe', topic: 'room:2', since: { offset: 0, epoch: 'abc' }, ref: 2 });
    assert.deepEqual(await c.next((m) => m.ref === 2), { type: 'denied', topic: 'room:2', ref: 2, reason: 'unavailable' });
    c.send({ type: 'subscribe', topic: 'room:3', last: 5, ref: 3 });
    assert.deepEqual(await c.next((m) => m.ref === 3), { type: 'denied', topic: 'room:3', ref: 3, reason: 'unavailable' });
    // A batch (a reconnect's frame): each history topic is answered on its own.
    c.send({ type: 'subscribe', topics: ['room:4', 'plain'], ref: 4 });
    const answers = [await c.next((m) => m.ref === 4), await c.next((m) => m.ref === 4)];
    assert.deepEqual(answers.map((m) => [m.topic, m.type, m.reason]).sort(), [
      ['plain', 'subscribed', undefined],
      ['room:4', 'denied', 'unavailable'],
    ]);
    c.send({ type: 'subscribe', topic: 'boom:1', ref: 5 });
    assert.deepEqual(await c.next((m) => m.ref === 5), { type: 'denied', topic: 'boom:1', ref: 5, reason: 'error' });
    assert.equal(s.readFailures(), 3, 'one log line per failed read');
    assert.ok(s.log.some((e) => e.level === 'error' && e.msg === 'websocket subscribe hook failed'));
    c.close();
  } finally {
    await redisUp(s.store);
    await s.close();
  }
});

test('client: a subscriber resubscribing while Redis is down keeps retrying, then recovers and gets live traffic', async () => {
  const s = await start();
  const live = connect(s.url, { minDelay: 20, maxDelay: 200, onError: (e) => void errors.push(e as ClientError) });
  const errors: ClientError[] = [];
  const denied: ClientError[] = [];
  const infos: SubscribeInfo[] = [];
  const got: unknown[] = [];
  try {
    live.subscribe('room:r', (_e, d) => void got.push(d), {
      onSubscribed: (i) => void infos.push(i),
      onDenied: (e) => void denied.push(e),
    });
    await waitFor(() => infos.length === 1, 'subscribed');
    s.app.publish('room:r', 'n', 1);
    await waitFor(() => got.length === 1, 'live');

    await redisDown(s.store);
    s.dropAll(); // the client reconnects and resubscribes with since: the read fails
    await waitFor(() => s.readFailures() >= 4, 'denied `unavailable` and retried, again and again', 10_000);
    assert.equal(infos.length, 1, 'not subscribed while the store is down');
    assert.deepEqual(denied, [], 'not reported as a denial');
    assert.deepEqual(errors, [], 'nothing for onError either');

    await redisUp(s.store);
    // Retries wait at most maxDelay (200 ms) once the store answers again.
    await waitFor(() => infos.length === 2, 'subscribed again once Redis is back', 10_000);
    assert.equal(infos[1]!.recovering, true, 'it resubscribed from its position');
    assert.equal(infos[1]!.recovered, false, 'Redis restarted empty: that history is gone (a new epoch)');
    s.app.publish('room:r', 'n', 2);
    await waitFor(() => got.length === 2, 'live traffic after the outage');
    assert.deepEqual(got, [1, 2]);
    // No retry left behind: no subscribe after the one that succeeded.
    const after = s.subscribes('room:r');
    await sleep(600);
    assert.equal(s.subscribes('room:r'), after, 'no stray subscribe once subscribed');
    assert.deepEqual(denied, []);
  } finally {
    live.close();
    if (!s.store.stats().connected) await redisUp(s.store);
    await s.close();
  }
});

test('client: unsubscribe() while waiting to retry cancels the retry (no subscribe later)', async () => {
  const s = await start();
  // Retries (and the reconnect) wait between 0 and 2 s: unsubscribe() comes during the wait.
  const live = connect(s.url, { minDelay: 2000, maxDelay: 2000, onError: () => {} });
  try {
    const infos: SubscribeInfo[] = [];
    const off = live.subscribe('room:u', () => {}, { onSubscribed: (i) => void infos.push(i) });
    await waitFor(() => infos.length === 1, 'subscribed');
    await redisDown(s.store);
    const failures = s.readFailures();
    s.dropAll();
    await waitFor(() => s.readFailures() > failures, 'denied `unavailable` after the reconnect', 10_000);
    await sleep(100); // the denial reaches the client: its retry now waits
    off();
    await sleep(50); // a retry sent just before off() (unlikely) reaches the server and counts
    const count = s.subscribes('room:u');
    await sleep(2500); // past the longest wait
    assert.equal(s.subscribes('room:u'), count, 'no subscribe after unsubscribe()');
    await redisUp(s.store);
    s.app.publish('room:u', 'n', 1);
    await sleep(300);
    assert.equal(infos.length, 1, 'never subscribed again');
    assert.equal(s.subscribes('room:u'), count);
  } finally {
    live.close();
    if (!s.store.stats().connected) await redisUp(s.store);
    await s.close();
  }
});
