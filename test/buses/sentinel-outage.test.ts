// Redis Sentinel outages (issue 28 §4): what the rate-limit store and the bus do while no
// primary answers. 1) The primary SIGKILLed under rate-limited traffic, its replica promoted:
// no request hangs and nothing crashes, limits fail open (or closed, onStoreError: 'deny')
// during the switch and are enforced again after it, on the counts Redis had replicated.
// 2) The primary killed with no replica to promote and no traffic at all: /readyz says 503
// within seconds, rate-limited requests answer at once, and both recover when it is back.
// docs/rate-limit.md ("Stores") and docs/scaling.md ("Faults") state what is checked here.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redisBus, redisRateLimitStore, type RedisRateLimitStore } from '../../packages/redis/src/index.ts';
import { App, type Bus, health, rateLimit } from '../../packages/server/src/index.ts';
import { RedisBroker } from './brokers.ts';
import { sleep, waitFor } from './fault-node.ts';
import { cli, RoleBroker, watch } from './sentinel-harness.ts';

/** A server with one limiter that fails open (/open) and one that fails closed (/closed), both keyed by ?k=. */
async function limited(store: RedisRateLimitStore, bus?: Bus) {
  const errors: string[] = [];
  const log = (o: unknown, m?: string) => void errors.push(m ?? String(o));
  const app = new App({ logger: { error: log, warn: log, info: () => {}, debug: () => {} }, ...(bus === undefined ? {} : { bus }) });
  app.use(health());
  const key = (req: { query: Record<string, unknown> }) => String(req.query.k);
  app.use('/open', rateLimit({ window: 60_000, max: 20, key, store }));
  app.use('/closed', rateLimit({ window: 60_000, max: 20, key, store, onStoreError: 'deny' }));
  app.get('/open', () => 'ok');
  app.get('/closed', () => 'ok');
  const server = await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${server.port}`;
  return {
    errors,
    /** Status and milliseconds of one request. */
    async hit(path: string, k = 'k') {
      const t0 = Date.now();
      const r = await fetch(`${base}${path}?k=${k}`);
      await r.arrayBuffer();
      return { status: r.status, ms: Date.now() - t0 };
    },
    close: () => server.close({ timeout: 1000 }),
  };
}

test('rate limits through a Sentinel failover: no request hangs, fail open or closed meanwhile, the replicated counts enforced after', async (t) => {
  const primary = await RedisBroker.start();
  const replica = await RoleBroker.start('replica', primary.port);
  const { sentinel, option } = await watch(primary, replica);
  const store = redisRateLimitStore({ sentinel: option, prefix: 'rl:', timeout: 500 });
  const s = await limited(store);
  try {
    await store.connect();
    for (let i = 0; i < 15; i++) assert.equal((await s.hit('/open', 'a')).status, 200);
    await waitFor(() => cli(replica, 'get', 'rl:a').trim() === '15', 'the count replicated');

    // Traffic: a new key per request, so a 200 on /closed is a hit Redis counted and a 503 one it did not.
    const sent: { key: string; status: number }[] = [];
    let slowest = 0;
    let stop = false;
    const traffic = (async () => {
      for (let i = 0; !stop; i++) {
        const r = await s.hit('/closed', `t${i}`);
        sent.push({ key: `t${i}`, status: r.status });
        slowest = Math.max(slowest, r.ms);
        assert.equal((await s.hit('/open', `o${i}`)).status, 200, 'fail open: /open always answers 200');
        await sleep(5);
      }
    })();
    await waitFor(() => sent.length > 30, 'traffic flows');
    const killedAt = Date.now();
    await primary.stop(); // SIGKILL
    await waitFor(() => cli(replica, 'role').startsWith('master'), 'the sentinel promotes the replica', 20_000);
    const promotedAfter = Date.now() - killedAt;
    const mark = sent.length;
    await waitFor(() => sent.slice(mark).some((x) => x.status === 200), 'counting again through the new primary', 20_000);
    const countingAfter = Date.now() - killedAt;
    await sleep(200);
    stop = true;
    await traffic;

    const refused = sent.filter((x) => x.status === 503).length;
    assert.ok(refused > 0, 'fail closed: /closed answered 503 while no primary answered');
    assert.ok(
      sent.every((x) => x.status === 200 || x.status === 503),
      'only 200 or 503',
    );
    assert.ok(slowest < 3000, `no request waited for the primary (slowest ${slowest} ms, timeout 500)`);
    assert.ok(
      s.errors.some((m) => /rate limit store failed/.test(m)),
      'the store failure is logged',
    );
    // What the new primary holds for the traffic's keys: 1 (counted once), none (lost), 2 (counted twice).
    const values = cli(replica, 'mget', ...sent.map((x) => `rl:${x.key}`)).split('\n');
    const counted = sent.map((x, i) => ({ ...x, n: Number(values[i] || 0) }));
    const lostOk = counted.filter((x) => x.status === 200 && x.n === 0).length;
    const twice = counted.filter((x) => x.n > 1).length;
    const late = counted.filter((x) => x.status === 503 && x.n > 0).length;
    t.diagnostic(
      `primary killed: replica promoted after ${promotedAfter} ms, counting again after ${countingAfter} ms; ` +
        `${sent.length} hits, ${refused} failed (503 with deny, let through with allow), slowest ${slowest} ms; on the new primary: ` +
        `${lostOk} answered hits missing (not replicated), ${late} failed hits counted later, ${twice} counted twice`,
    );
    assert.ok(lostOk + twice <= 5, 'only the hits in flight at the kill are lost or counted twice');

    // The replicated count carried over (no reset), with its window: 5 more hits, then 429.
    const after: number[] = [];
    for (let i = 0; i < 6; i++) after.push((await s.hit('/open', 'a')).status);
    assert.deepEqual(after, [200, 200, 200, 200, 200, 429], 'the limit is enforced on the count from before the failover');
    const ttl = Number(cli(replica, 'pttl', 'rl:a'));
    assert.ok(ttl > 0 && ttl <= 60_000, `the window carried over too (pttl ${ttl})`);
  } finally {
    await s.close();
    await store.close();
    await Promise.all([sentinel.dispose(), replica.dispose(), primary.dispose()]);
  }
});

test('no primary reachable (killed, no replica to promote, no traffic): /readyz 503 within seconds, limited requests answer at once; both back with the primary', async (t) => {
  const primary = await RedisBroker.start();
  const { sentinel, option } = await watch(primary);
  const store = redisRateLimitStore({ sentinel: option, prefix: 'nb:' });
  // No presence announcements and no publishes: the stall watch (stallTimeout) has nothing to notice.
  const bus = redisBus({ sentinel: option, presenceInterval: false });
  const s = await limited(store, bus as unknown as Bus);
  try {
    await store.connect();
    await waitFor(async () => (await s.hit('/readyz')).status === 200, 'ready through the sentinel');
    assert.equal((await s.hit('/closed')).status, 200);

    const killedAt = Date.now();
    await primary.stop(); // SIGKILL
    await waitFor(async () => (await s.hit('/readyz')).status === 503, '/readyz 503 without any traffic', 5000);
    const notReadyAfter = Date.now() - killedAt;
    await waitFor(() => store.away, 'the store knows', 5000);
    const during = [await s.hit('/closed'), await s.hit('/open'), await s.hit('/closed')];
    assert.deepEqual(
      during.map((r) => r.status),
      [503, 200, 503],
      'fail closed (deny) and open (allow)',
    );
    assert.ok(
      during.every((r) => r.ms < 500),
      `answered at once, not after the timeout (${during.map((r) => r.ms)} ms)`,
    );
    await sleep(3000); // the sentinel gives up its failover: nothing to promote
    assert.equal((await s.hit('/readyz')).status, 503, 'still 503 while no primary answers');
    assert.equal((await s.hit('/healthz')).status, 200, 'alive all along');

    const restartedAt = Date.now();
    await primary.start(); // same port, empty
    await waitFor(async () => (await s.hit('/readyz')).status === 200, '/readyz 200 once the primary is back', 20_000);
    const readyAfter = Date.now() - restartedAt;
    await waitFor(async () => (await s.hit('/closed', 'back')).status === 200, 'counting again', 20_000);
    t.diagnostic(`primary killed: /readyz 503 after ${notReadyAfter} ms; restarted: /readyz 200 after ${readyAfter} ms`);
    assert.ok(notReadyAfter < 3000, `/readyz said 503 within 3 s (${notReadyAfter} ms)`);
  } finally {
    await s.close();
    await store.close();
    await Promise.all([sentinel.dispose(), primary.dispose()]);
  }
});
