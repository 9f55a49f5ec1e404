// WebSocket rate limits: upgrades per address (429 before the handshake), messages per socket
// per second (RATE_LIMITED replies, then close 4430), with real clients.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { App, MemoryRateLimitStore, type RateLimitHit, type RateLimitStore } from '../../src/index.ts';
import { eventually, openWs, rawWebSocket, recordingLogger, sleep, start } from '../helpers.ts';

const frame = (m: unknown) => JSON.stringify(m);

describe('WebSocket rate limits', () => {
  test('upgrades per address: past max in the window, 429 with Retry-After before the handshake; other keys unaffected', async () => {
    const { entries, logger } = recordingLogger();
    const app = new App({ logger, trustProxy: true });
    app.ws('/live', { rateLimit: { upgrades: { window: 60_000, max: 2 } } });
    const srv = await start(app);
    try {
      const a = await rawWebSocket(srv.port, '/live', { 'x-forwarded-for': '10.0.0.1' });
      const b = await rawWebSocket(srv.port, '/live', { 'x-forwarded-for': '10.0.0.1' });
      assert.match(a.handshake, /^HTTP\/1.1 101/);
      assert.match(b.handshake, /^HTTP\/1.1 101/);
      const c = await rawWebSocket(srv.port, '/live', { 'x-forwarded-for': '10.0.0.1' });
      assert.match(c.handshake, /^HTTP\/1.1 429/);
      assert.match(c.handshake, /retry-after: (5\d|60)\r\n/i);
      const other = await rawWebSocket(srv.port, '/live', { 'x-forwarded-for': '10.0.0.2' });
      assert.match(other.handshake, /^HTTP\/1.1 101/, 'another address has its own budget');
      assert.equal(
        entries.filter((e) => e.msg === 'websocket upgrades over the rate limit: refusing with 429').length,
        1,
        'logged once per key and window',
      );
      for (const s of [a, b, c, other]) s.destroy();
    } finally {
      await srv.close();
    }
  });

  test('an async store (shared-store shape) and a custom key; a failing store lets upgrades through, logged', async () => {
    const memory = new MemoryRateLimitStore();
    let calls = 0;
    const slowStore: RateLimitStore = {
      async increment(key, windowMs): Promise<RateLimitHit> {
        calls++;
        await sleep(5);
        return memory.increment(key, windowMs);
      },
      reset: (key) => memory.reset(key),
    };
    const broken: RateLimitStore = {
      increment: () => Promise.reject(new Error('redis down')),
      reset() {},
    };
    const { entries, logger } = recordingLogger();
    const app = new App({ logger });
    app.ws('/by-user', {
      upgrade: (req) => ({ user: req.query.user }),
      rateLimit: { upgrades: { window: 60_000, max: 1, key: (req) => String(req.query.user), store: slowStore } },
    });
    app.ws('/broken', { rateLimit: { upgrades: { window: 1000, max: 1, store: broken } } });
    const srv = await start(app);
    try {
      const first = await rawWebSocket(srv.port, '/by-user?user=ada');
      const second = await rawWebSocket(srv.port, '/by-user?user=ada');
      const bob = await rawWebSocket(srv.port, '/by-user?user=bob');
      assert.match(first.handshake, /^HTTP\/1.1 101/);
      assert.match(second.handshake, /^HTTP\/1.1 429/);
      assert.match(bob.handshake, /^HTTP\/1.1 101/);
      assert.equal(calls, 3);
      const x = await rawWebSocket(srv.port, '/broken');
      const y = await rawWebSocket(srv.port, '/broken');
      assert.match(x.handshake, /^HTTP\/1.1 101/);
      assert.match(y.handshake, /^HTTP\/1.1 101/, 'fails open');
      assert.equal(
        entries.filter((e) => e.msg === 'websocket upgrade rate limit store failed: upgrade allowed').length,
        1,
        'throttled log',
      );
      for (const s of [first, second, bob, x, y]) s.destroy();
    } finally {
      memory.clear();
      await srv.close();
    }
  });

  test('messagesPerSecond: events past the limit get RATE_LIMITED with their ref, the handler does not run; the next second is fine', async () => {
    let handled = 0;
    const app = new App();
    app.ws('/live', {
      events: { ping: { handler: () => ++handled } },
      rateLimit: { messagesPerSecond: 5, closeAfter: 0 },
    });
    const srv = await start(app);
    try {
      const c = await openWs(`ws://127.0.0.1:${srv.port}/live`);
      for (let i = 1; i <= 8; i++) c.ws.send(frame({ type: 'event', event: 'ping', ref: i }));
      const replies = [];
      for (let i = 1; i <= 8; i++) replies.push(await c.next((m) => m.ref === i));
      assert.deepEqual(
        replies.slice(0, 5).map((r) => r.type),
        ['reply', 'reply', 'reply', 'reply', 'reply'],
      );
      for (const r of replies.slice(5)) {
        assert.equal(r.type, 'error');
        assert.equal(r.code, 'RATE_LIMITED');
        assert.equal(r.message, 'Too many messages: at most 5 per second');
      }
      assert.equal(handled, 5);
      await sleep(1050);
      c.ws.send(frame({ type: 'event', event: 'ping', ref: 100 }));
      assert.equal((await c.next((m) => m.ref === 100)).type, 'reply');
      c.ws.close();
    } finally {
      await srv.close();
    }
  });

  test('raw messages past the limit are dropped; sustained abuse closes with 4430 (logged); a quiet second forgives', async () => {
    const { entries, logger } = recordingLogger();
    const seen: string[] = [];
    const app = new App({ logger });
    app.ws('/raw', {
      message: (ws, data) => void seen.push(Buffer.from(data).toString()),
      rateLimit: { messagesPerSecond: 3, closeAfter: 4 },
    });
    const srv = await start(app);
    try {
      // Over by 3 (< closeAfter), then a quiet second, then over by 3 again: still open.
      const polite = await openWs(`ws://127.0.0.1:${srv.port}/raw`);
      for (let i = 0; i < 6; i++) polite.ws.send(`a${i}`);
      await eventually(() => seen.length === 3);
      await sleep(2100); // a full second with nothing refused in between
      for (let i = 0; i < 6; i++) polite.ws.send(`b${i}`);
      await eventually(() => seen.length === 6);
      await sleep(50);
      assert.deepEqual(seen, ['a0', 'a1', 'a2', 'b0', 'b1', 'b2']);
      assert.equal(polite.ws.readyState, WebSocket.OPEN);
      polite.ws.close();

      const flood = await openWs(`ws://127.0.0.1:${srv.port}/raw`);
      for (let i = 0; i < 50; i++) flood.ws.send(`f${i}`);
      const closed = await flood.closed;
      assert.equal(closed.code, 4430);
      assert.equal(closed.reason, 'Rate limited');
      assert.equal(
        entries.filter((e) => e.msg === 'websocket kept sending past its rate limit: closing with 4430').length,
        1,
        'logged once, not for every frame in flight',
      );
    } finally {
      await srv.close();
    }
  });

  test('options are checked at app.ws()', () => {
    const app = new App();
    assert.throws(() => app.ws('/a', { rateLimit: {} }), /ws \/a: rateLimit needs upgrades or messagesPerSecond/);
    assert.throws(() => app.ws('/a', { rateLimit: { messagesPerSecond: 0 } }), /messagesPerSecond must be a positive integer/);
    assert.throws(() => app.ws('/a', { rateLimit: { messagesPerSecond: 5, closeAfter: -1 } }), /closeAfter must be a non-negative integer/);
    assert.throws(() => app.ws('/a', { rateLimit: { upgrades: { window: 0, max: 1 } } }), /upgrades.window must be a positive integer/);
    assert.throws(() => app.ws('/a', { rateLimit: { upgrades: { window: 10, max: 1.5 } } }), /upgrades.max must be a positive integer/);
    assert.throws(() => app.ws('/a', { rateLimit: { upgrades: { window: 10, max: 1, store: {} as never } } }), /store must implement/);
    assert.throws(() => app.ws('/a', { rateLimit: { perSecond: 1 } as never }), /unknown option "perSecond"/);
    assert.throws(() => app.ws('/a', { rateLimit: 5 as never }), /rateLimit must be an object/);
  });
});
