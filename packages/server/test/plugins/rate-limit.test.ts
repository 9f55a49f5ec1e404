import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { App, MemoryRateLimitStore, rateLimit, type RateLimitStore } from '../../src/index.ts';
import { recordingLogger, sleep, start } from '../helpers.ts';

async function serve(mw: ReturnType<typeof rateLimit>, appOptions: ConstructorParameters<typeof App>[0] = {}) {
  const app = new App(appOptions);
  app.use(mw);
  app.get('/', () => 'ok');
  return start(app);
}

describe('rateLimit', () => {
  test('max per window: RateLimit-* on every answer, then 429 with Retry-After; the handler is not reached', async () => {
    let reached = 0;
    const app = new App();
    app.use(rateLimit({ window: 60_000, max: 3 }));
    app.get('/', () => {
      reached++;
      return 'ok';
    });
    const srv = await start(app);
    try {
      for (const remaining of ['2', '1', '0']) {
        const res = await fetch(srv.url + '/');
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('ratelimit-limit'), '3');
        assert.equal(res.headers.get('ratelimit-remaining'), remaining);
        assert.equal(res.headers.get('ratelimit-reset'), '60');
      }
      const res = await fetch(srv.url + '/');
      assert.equal(res.status, 429);
      assert.deepEqual(await res.json(), { error: 'Too Many Requests' });
      assert.equal(res.headers.get('retry-after'), '60');
      assert.equal(res.headers.get('ratelimit-limit'), '3');
      assert.equal(res.headers.get('ratelimit-remaining'), '0');
      assert.equal(res.headers.get('ratelimit-reset'), '60');
      assert.equal(reached, 3);
      // 404s count too: the limiter runs before routing decides anything.
      assert.equal((await fetch(srv.url + '/missing')).status, 429);
    } finally {
      await srv.close();
    }
  });

  test('the count starts over after the window', async () => {
    const srv = await serve(rateLimit({ window: 300, max: 1 }));
    try {
      assert.equal((await fetch(srv.url + '/')).status, 200);
      const limited = await fetch(srv.url + '/');
      assert.equal(limited.status, 429);
      assert.equal(limited.headers.get('retry-after'), '1');
      await sleep(350);
      const again = await fetch(srv.url + '/');
      assert.equal(again.status, 200);
      assert.equal(again.headers.get('ratelimit-remaining'), '0');
    } finally {
      await srv.close();
    }
  });

  test('keys are isolated: by default the client address (here via a trusted X-Forwarded-For)', async () => {
    const srv = await serve(rateLimit({ window: 60_000, max: 1 }), { trustProxy: true });
    const from = (ip: string) => fetch(srv.url + '/', { headers: { 'x-forwarded-for': ip } });
    try {
      assert.equal((await from('10.0.0.1')).status, 200);
      assert.equal((await from('10.0.0.1')).status, 429);
      assert.equal((await from('10.0.0.2')).status, 200);
      assert.equal((await from('10.0.0.2')).status, 429);
    } finally {
      await srv.close();
    }
  });

  test('custom key functions, sync and async; a key that is not a string is a 500', async () => {
    const byUser = await serve(rateLimit({ window: 60_000, max: 1, key: (req) => req.header('x-user') ?? 'anon' }));
    const asyncKey = await serve(rateLimit({ window: 60_000, max: 1, key: async (req) => `k:${await Promise.resolve(req.query.k)}` }));
    const broken = await serve(rateLimit({ window: 60_000, max: 1, key: () => 42 as never }));
    try {
      const as = (u: string) => fetch(byUser.url + '/', { headers: { 'x-user': u } });
      assert.equal((await as('alice')).status, 200);
      assert.equal((await as('alice')).status, 429);
      assert.equal((await as('bob')).status, 200);
      assert.equal((await fetch(asyncKey.url + '/?k=1')).status, 200);
      const second = await fetch(asyncKey.url + '/?k=1');
      assert.equal(second.status, 429);
      assert.equal(second.headers.get('ratelimit-remaining'), '0');
      assert.equal((await fetch(asyncKey.url + '/?k=2')).status, 200);
      assert.equal((await fetch(broken.url + '/')).status, 500);
    } finally {
      await byUser.close();
      await asyncKey.close();
      await broken.close();
    }
  });

  test('headers: false sends no RateLimit-* but still 429 + Retry-After', async () => {
    const srv = await serve(rateLimit({ window: 60_000, max: 1, headers: false }));
    try {
      const ok = await fetch(srv.url + '/');
      assert.equal(ok.headers.get('ratelimit-limit'), null);
      const limited = await fetch(srv.url + '/');
      assert.equal(limited.status, 429);
      assert.equal(limited.headers.get('ratelimit-remaining'), null);
      assert.equal(limited.headers.get('retry-after'), '60');
    } finally {
      await srv.close();
    }
  });

  test('an async store (as Redis would be) and reset(key)', async () => {
    const memory = new MemoryRateLimitStore();
    const store: RateLimitStore = {
      increment: async (key, windowMs) => {
        await sleep(1);
        return { ...memory.increment(key, windowMs) };
      },
      reset: async (key) => memory.reset(key),
    };
    const srv = await serve(rateLimit({ window: 60_000, max: 1, store, key: () => 'shared' }));
    try {
      assert.equal((await fetch(srv.url + '/')).status, 200);
      assert.equal((await fetch(srv.url + '/')).status, 429);
      await store.reset('shared');
      assert.equal((await fetch(srv.url + '/')).status, 200);
    } finally {
      await srv.close();
      memory.clear();
    }
  });

  test('a failing store fails open by default (logged, throttled), or closed with 503 when asked', async () => {
    const failing = (mode: 'sync' | 'async'): RateLimitStore => ({
      increment: () => {
        if (mode === 'sync') throw new Error('store down');
        return Promise.reject(new Error('store down'));
      },
      reset: () => {},
    });
    for (const mode of ['sync', 'async'] as const) {
      const open = recordingLogger();
      const closed = recordingLogger();
      const allow = await serve(rateLimit({ window: 1000, max: 1, store: failing(mode) }), { logger: open.logger });
      const deny = await serve(rateLimit({ window: 1000, max: 1, store: failing(mode), onStoreError: 'deny' }), { logger: closed.logger });
      try {
        for (let i = 0; i < 3; i++) {
          const res = await fetch(allow.url + '/');
          assert.equal(res.status, 200, mode);
          assert.equal(res.headers.get('ratelimit-limit'), null);
        }
        assert.equal(open.entries.filter((e) => e.msg === 'rate limit store failed: request allowed').length, 1, mode);
        const refused = await fetch(deny.url + '/');
        assert.equal(refused.status, 503, mode);
        assert.deepEqual(await refused.json(), { error: 'Rate limiter unavailable' });
        assert.ok(closed.entries.some((e) => e.level === 'error' && e.msg === 'rate limit store failed: request refused (503)'));
      } finally {
        await allow.close();
        await deny.close();
      }
    }
  });

  test('a store answering garbage is a 500, not a crash', async () => {
    const srv = await serve(rateLimit({ window: 1000, max: 1, store: { increment: () => ({}) as never, reset: () => {} } }));
    try {
      assert.equal((await fetch(srv.url + '/')).status, 500);
      assert.equal((await fetch(srv.url + '/')).status, 500);
    } finally {
      await srv.close();
    }
  });

  test('options are checked at setup', () => {
    assert.throws(() => rateLimit(undefined as never), /options \{ window, max \} are required/);
    assert.throws(() => rateLimit({ window: 0, max: 1 }), /window must be a positive integer/);
    assert.throws(() => rateLimit({ window: '1m' as never, max: 1 }), /window must be/);
    assert.throws(() => rateLimit({ window: 1000, max: 0 }), /max must be a positive integer/);
    assert.throws(() => rateLimit({ window: 1000, max: 1.5 }), /max must be/);
    assert.throws(() => rateLimit({ window: 1000, max: 1, key: 'ip' as never }), /key must be a function/);
    assert.throws(() => rateLimit({ window: 1000, max: 1, store: {} as never }), /store must implement/);
    assert.throws(() => rateLimit({ window: 1000, max: 1, onStoreError: 'ignore' as never }), /onStoreError/);
    assert.throws(() => rateLimit({ window: 1000, max: 1, headers: 'yes' as never }), /headers must be a boolean/);
    assert.throws(() => rateLimit({ windowMs: 1000, max: 1 } as never), /unknown option "windowMs"/);
  });
});

describe('MemoryRateLimitStore', () => {
  test('fixed window per key', async () => {
    const store = new MemoryRateLimitStore();
    try {
      const a1 = store.increment('a', 100);
      assert.equal(a1.count, 1);
      assert.equal(store.increment('a', 100).count, 2);
      assert.equal(store.increment('b', 100).count, 1);
      await sleep(130);
      const fresh = store.increment('a', 100);
      assert.equal(fresh.count, 1);
      assert.ok(fresh.resetAt > Date.now());
    } finally {
      store.clear();
    }
  });

  test('memory stays bounded: keys from past windows are dropped without a scan', async () => {
    const store = new MemoryRateLimitStore();
    try {
      const windowMs = 40;
      let peak = 0;
      for (let wave = 0; wave < 6; wave++) {
        for (let i = 0; i < 5000; i++) store.increment(`w${wave}:${i}`, windowMs);
        store.increment('steady', windowMs);
        peak = Math.max(peak, store.size);
        await sleep(windowMs + 10);
      }
      // 30,000 distinct keys went through; at most the last two windows' worth are held.
      assert.ok(peak <= 3 * 5001, `peak ${peak}`);
      assert.ok(store.size <= 2 * 5001, `size ${store.size}`);
      await sleep(windowMs * 3 + 20);
      assert.equal(store.size, 0);
    } finally {
      store.clear();
    }
  });
});
