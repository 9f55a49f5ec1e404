// @tachyon/redis's rate-limit store against a real redis-server: two apps (each with its own
// store and connection, as two servers would have) enforce one limit; windows expire; reset;
// prefixes isolate; WebSocket upgrades count across apps; Redis down → requests allowed and
// logged (fail open), then counted again once Redis is back; Redis frozen → no hit waits
// longer than `timeout`.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { App, rateLimit } from '@tachyon/server';
import { redisRateLimitStore, type RedisRateLimitStore } from '@tachyon/redis';
import { RedisBroker } from './brokers.ts';
import { sleep, waitFor } from './node.ts';

interface Server {
  app: App;
  url: string;
  store: RedisRateLimitStore;
  errors: string[];
}

async function server(redis: RedisBroker, options: { window: number; max: number; prefix?: string }): Promise<Server> {
  const errors: string[] = [];
  const log = (o: unknown, m?: string) => void errors.push(m ?? String(o));
  const logger = { error: log, warn: log, info: () => {}, debug: () => {} };
  const app = new App({ logger });
  const store = redisRateLimitStore({ url: redis.url, prefix: options.prefix });
  await store.connect();
  app.onClose(() => store.close());
  app.use(rateLimit({ window: options.window, max: options.max, store }));
  app.get('/', () => 'ok');
  app.ws('/live', { rateLimit: { upgrades: { window: options.window, max: options.max, store } } });
  const listening = await app.listen(0);
  return { app, url: `http://127.0.0.1:${listening.port}`, store, errors };
}

describe('redisRateLimitStore: one limit across servers', () => {
  let redis: RedisBroker;
  const servers: Server[] = [];
  before(async () => {
    redis = await RedisBroker.start();
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.app.close()));
    await redis.dispose();
  });
  const start = async (o: { window: number; max: number; prefix?: string }) => {
    const s = await server(redis, o);
    servers.push(s);
    return s;
  };

  test('hits on two servers count against one limit; 429 with Retry-After and RateLimit-* headers', async () => {
    const [a, b] = [await start({ window: 60_000, max: 3, prefix: 't1:' }), await start({ window: 60_000, max: 3, prefix: 't1:' })];
    const statuses: number[] = [];
    for (const s of [a, b, a, b]) statuses.push((await fetch(s.url)).status);
    assert.deepEqual(statuses, [200, 200, 200, 429]);
    const refused = await fetch(a.url);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) >= 59, 'Retry-After from the window Redis keeps');
    assert.equal(refused.headers.get('ratelimit-remaining'), '0');
    assert.equal(redis.cli('--scan', '--pattern', 't1:*').split('\n').length, 1, 'one counter for the client address');
    assert.ok(Number(redis.cli('pttl', redis.cli('--scan', '--pattern', 't1:*'))) > 55_000, 'the counter expires with its window');
  });

  test('the window expires; reset(key) forgets a key; another prefix is another limit', async () => {
    const a = await start({ window: 400, max: 1, prefix: 't2:' });
    assert.equal((await fetch(a.url)).status, 200);
    assert.equal((await fetch(a.url)).status, 429);
    const other = await start({ window: 60_000, max: 1, prefix: 't2other:' });
    assert.equal((await fetch(other.url)).status, 200, 'a different prefix counts apart');
    await sleep(450);
    assert.equal((await fetch(a.url)).status, 200, 'a new window');
    assert.equal((await fetch(a.url)).status, 429);
    const key = redis.cli('--scan', '--pattern', 't2:*').slice('t2:'.length);
    await a.store.reset(key);
    assert.equal((await fetch(a.url)).status, 200, 'reset forgets the count');
  });

  test('WebSocket upgrades per address count across servers (429 before the handshake)', async () => {
    const [a, b] = [await start({ window: 60_000, max: 2, prefix: 't3:' }), await start({ window: 60_000, max: 2, prefix: 't3:' })];
    const upgrade = (s: Server) =>
      new Promise<string>((resolve) => {
        const ws = new WebSocket(s.url.replace('http', 'ws') + '/live');
        ws.onopen = () => {
          ws.close();
          resolve('open');
        };
        ws.onerror = () => resolve('refused');
      });
    // The HTTP limiter is on this prefix too: the upgrades are the only hits here.
    assert.deepEqual([await upgrade(a), await upgrade(b), await upgrade(a)], ['open', 'open', 'refused']);
  });

  test('Redis down: requests are let through and the failure is logged; counting resumes when Redis is back', async () => {
    const a = await start({ window: 60_000, max: 2, prefix: 't4:' });
    assert.equal((await fetch(a.url)).status, 200);
    await redis.stop();
    const during = await Promise.all([fetch(a.url), fetch(a.url), fetch(a.url)]);
    assert.deepEqual(
      during.map((r) => r.status),
      [200, 200, 200],
      'fail open: a limiter outage does not take the API down',
    );
    assert.ok(
      a.errors.some((m) => /rate limit store failed: request allowed/.test(m)),
      'logged',
    );
    await redis.start();
    await waitFor(async () => (await fetch(a.url)).status === 429, 'counting again after the reconnect', 15_000);
  });

  test('Redis frozen (SIGSTOP): a hit fails after `timeout`, the next ones at once, none waits for Redis; counting resumes when it answers', async () => {
    const errors: string[] = [];
    const log = (o: unknown, m?: string) => void errors.push(m ?? String(o));
    const app = new App({ logger: { error: log, warn: log, info: () => {}, debug: () => {} } });
    const store = redisRateLimitStore({ url: redis.url, prefix: 't5:', timeout: 300 });
    await store.connect();
    app.onClose(() => store.close());
    app.use(rateLimit({ window: 60_000, max: 1, store, onStoreError: 'deny' }));
    app.get('/', () => 'ok');
    const url = `http://127.0.0.1:${(await app.listen(0)).port}`;
    servers.push({ app, url, store, errors });
    const timed = async () => {
      const t0 = Date.now();
      const status = (await fetch(url)).status;
      return { status, ms: Date.now() - t0 };
    };
    assert.equal((await timed()).status, 200);
    redis.pause();
    try {
      const first = await timed();
      assert.equal(first.status, 503, 'fail closed (deny): the hit timed out');
      assert.ok(first.ms >= 250 && first.ms < 3000, `the first hit waited for the timeout only (${first.ms} ms)`);
      assert.equal(store.away, true, 'the store knows Redis does not answer');
      const next = await Promise.all([timed(), timed(), timed()]);
      assert.deepEqual(
        next.map((r) => r.status),
        [503, 503, 503],
      );
      assert.ok(
        next.every((r) => r.ms < 250),
        `the next hits failed at once (${next.map((r) => r.ms)} ms)`,
      );
    } finally {
      redis.resume();
    }
    await waitFor(() => !store.away, 'Redis answers the PING', 10_000);
    assert.equal((await timed()).status, 429, 'counting again once Redis answers');
    assert.ok(
      errors.some((m) => /rate limit store failed: request refused/.test(m)),
      'logged',
    );
  });

  test('bad options throw, naming the option', () => {
    assert.throws(() => redisRateLimitStore({ url: 'http://x' }), /url must be a redis/);
    assert.throws(() => redisRateLimitStore({ prefix: 5 as never }), /prefix/);
    assert.throws(() => redisRateLimitStore({ nope: 1 } as never), /unknown option "nope"/);
    assert.throws(() => redisRateLimitStore({ timeout: 0 }), /timeout must be a positive integer/);
    assert.throws(() => redisRateLimitStore({ sentinel: { name: 'm', nodes: [] } }), /sentinel nodes must be a non-empty array/);
    assert.throws(
      () => redisRateLimitStore({ url: 'redis://a', sentinel: { name: 'm', nodes: [{ host: 'a', port: 1 }] } }),
      /give url or sentinel, not both/,
    );
  });
});
