// The history store's pending bound (maxPending, maxPendingBytes) against a real redis-server
// frozen with SIGSTOP (issue 28 §4): a frozen Redis keeps its connection open and answers
// nothing, so every append would wait in node-redis, in memory, for as long as the freeze.
// Checked: the pending appends stop at the bound, the rest go out live without a position
// (local subscribers keep getting them), memory after gc() stays bounded, one log line per
// episode, and after SIGCONT the waiting appends complete and publishes are kept again.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connect, type SubscribeInfo } from '../../client/src/index.ts';
import { App } from '../../server/src/index.ts';
import { RedisBroker } from '../../../test/buses/brokers.ts';
import { heldHeap, sleep, waitFor } from '../../../test/buses/fault-node.ts';
import { redisHistory } from '../src/index.ts';

const MiB = 2 ** 20;
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

let redis: RedisBroker;
before(async () => {
  redis = await RedisBroker.start();
});
after(async () => {
  redis.resume();
  await redis.dispose();
});

test('bad bounds are refused', () => {
  for (const bad of [0, -1, 1.5, '10', Number.NaN])
    assert.throws(() => redisHistory({ maxPending: bad as never }), /^TypeError: redisHistory\(\): maxPending must be a positive integer$/);
  assert.throws(() => redisHistory({ maxPendingBytes: 0 }), /maxPendingBytes must be a positive integer/);
});

test('Redis frozen (SIGSTOP): pending appends bounded, publishes go out live, memory bounded after gc(), kept again after SIGCONT', async (t) => {
  const logs: string[] = [];
  const log = (level: string) => (obj: unknown, msg?: string) => void logs.push(`${level} ${msg ?? ''} ${JSON.stringify(obj)}`);
  const BOUND = 300;
  const store = redisHistory({ url: redis.url, prefix: 'bound:', maxPending: BOUND });
  const byBytes = redisHistory({ url: redis.url, prefix: 'bound-bytes:', maxPendingBytes: 64 * 1024 });
  const app = new App({ logger: { error: log('error'), warn: log('warn'), info: log('info'), debug: () => {} } });
  app.topic('room:*', { history: { size: 100_000, store } });
  app.topic('big:*', { history: { size: 100_000, store: byBytes } });
  // The test's own client reads 30 MiB in bursts from this same process: on a loaded machine it
  // can fall over 1 MiB behind, and a socket closed for that (4429) resubscribes through the
  // frozen Redis and gets nothing live. Slow consumers have their own tests; not this one.
  app.ws('/ws', { maxBackpressure: 64 * MiB });
  const server = await app.listen({ port: 0, host: '127.0.0.1' });
  const live = connect(`ws://127.0.0.1:${server.port}/ws`, { minDelay: 20, maxDelay: 100, onError: () => {} });
  try {
    const got: number[] = [];
    const infos: SubscribeInfo[] = [];
    live.subscribe('room:1', (_e, data) => void got.push((data as { i: number }).i), { onSubscribed: (i) => void infos.push(i) });
    await live.ready;
    await waitFor(() => infos.length === 1, 'subscribed');
    const pad = 'x'.repeat(8000); // ~8 KB a message: 4 000 of them unbounded would hold over 30 MiB
    for (let i = 0; i < 20; i++) app.publish('room:1', 'n', { i, pad });
    await waitFor(() => got.length === 20, 'kept and delivered before the freeze');
    const heap0 = heldHeap();
    const rss0 = process.memoryUsage().rss;

    redis.pause();
    const N = 4000;
    let maxPending = 0;
    for (let i = 20; i < 20 + N; i++) {
      app.publish('room:1', 'n', { i, pad });
      if (i % 100 === 0) {
        maxPending = Math.max(maxPending, store.stats().pending);
        await sleep(5);
      }
    }
    for (let i = 0; i < 100; i++) app.publish('big:1', 'n', { i, pad });
    // Past the bound, publishes reach local subscribers at once, without waiting for Redis.
    await waitFor(() => got.length === 20 + N - BOUND, `the ${N - BOUND} publishes past the bound delivered live (got ${got.length - 20})`);
    const s = store.stats();
    assert.deepEqual(
      { pending: s.pending, overflowed: s.overflowed, connected: s.connected },
      { pending: BOUND, overflowed: N - BOUND, connected: true },
      'exactly maxPending appends wait; the rest were refused',
    );
    assert.ok(maxPending <= BOUND, `never more than the bound (max ${maxPending})`);
    const b = byBytes.stats();
    // 8 messages of ~8 016 bytes fit in 64 KiB, the 9th does not.
    assert.ok(b.pendingBytes <= 64 * 1024 && b.pending === 8, `maxPendingBytes holds: ${JSON.stringify(b)}`);
    assert.equal(b.overflowed, 100 - b.pending);
    const heapGrowth = heldHeap() - heap0;
    const rssGrowth = process.memoryUsage().rss - rss0;
    t.diagnostic(
      `frozen: ${N} publishes of 8 KB, ${s.pending} pending (${(s.pendingBytes / MiB).toFixed(1)} MiB), ${s.overflowed} live without a position; ` +
        `after gc(): heap +${(heapGrowth / MiB).toFixed(1)} MiB, rss +${(rssGrowth / MiB).toFixed(1)} MiB`,
    );
    // Unbounded, the 4 000 appends held their 8 KB each (over 30 MiB); bounded, 300 of them (2.3 MiB) plus node-redis's bookkeeping.
    assert.ok(heapGrowth < 12 * MiB, `heap after gc() grew ${(heapGrowth / MiB).toFixed(1)} MiB while frozen`);
    assert.ok(rssGrowth < 96 * MiB, `rss after gc() grew ${(rssGrowth / MiB).toFixed(1)} MiB while frozen`);
    const episodes = () => logs.filter((l) => l.startsWith('warn redis history: Redis answers nothing')).length;
    assert.equal(episodes(), 2, 'one line per store and episode, not one per refusal');

    redis.resume();
    await waitFor(() => store.stats().pending === 0 && byBytes.stats().pending === 0, 'the waiting appends complete after SIGCONT');
    assert.ok(
      logs.some((l) => l.startsWith(`info redis history: Redis answers again; ${N - BOUND} publishes were not kept`)),
      'the end of the episode is logged with what was not kept',
    );
    for (let i = 20 + N; i < 30 + N; i++) app.publish('room:1', 'n', { i, pad });
    await waitFor(() => got.length === 30 + N, 'every publish reached the local subscriber');
    // The documented order: those past the bound went out at once, ahead of the appends that waited for Redis.
    assert.deepEqual(got, [...range(0, 20), ...range(20 + BOUND, 20 + N), ...range(20, 20 + BOUND), ...range(20 + N, 30 + N)]);
    // Kept: before the freeze, the appends that waited, and after it; not those past the bound.
    assert.equal(await store.kept('room:1', { size: 100_000 }), 20 + BOUND + 10);
    assert.equal(infos.length, 1, 'the client never saw a gap: nothing past the bound took an offset');
    assert.equal(episodes(), 2);
  } finally {
    redis.resume();
    live.close();
    await server.close({ timeout: 1000 });
  }
});
