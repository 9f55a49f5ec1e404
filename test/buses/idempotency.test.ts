// Retried requests run once across servers that share a Redis (redisIdempotency() from
// @tachyon/redis, docs/realtime.md "Retried requests, run once"): two apps, each with its own
// store and Redis connection as two servers would have, on one real redis-server. A real
// @tachyon/client with `retries` talks to server A through a TCP proxy this test controls; the
// proxy cuts the connection after the request was sent and sends the reconnect to server B.
// The handler runs once in total and the resend gets A's outcome, whether A had finished or
// still runs; a server that died with a key running frees it after the lease; Redis down runs
// the handler here (logged) or refuses it (UNAVAILABLE), as the store's whenDown says.
import assert from 'node:assert/strict';
import { createServer, connect as tcp, type Server as TcpServer, type Socket as TcpSocket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { connect, type Live } from '@tachyon/client';
import { App } from '@tachyon/server';
import { redisIdempotency, type RedisIdempotencyOptions, type RedisIdempotencyStore } from '@tachyon/redis';
import { RedisBroker } from './brokers.ts';
import { sleep, waitFor } from './node.ts';

/** Every run of the `pay` handler, on every server of the test. */
const runs: { server: string; id: string }[] = [];

interface Server {
  name: string;
  port: number;
  store: RedisIdempotencyStore;
  warnings: string[];
  close(): Promise<void>;
}

async function server(name: string, redis: RedisBroker, options: RedisIdempotencyOptions = {}): Promise<Server> {
  const warnings: string[] = [];
  const warn = (o: unknown, m?: string) => void warnings.push(m ?? String(o));
  const app = new App({ logger: { error: warn, warn, info: () => {}, debug: () => {} } });
  const store = redisIdempotency({ url: redis.url, timeout: 500, ...options });
  app.onClose(() => store.close());
  app.ws('/live', {
    idempotency: { store },
    events: {
      pay: {
        handler: async (_ws, d: { id: string; ms: number }) => {
          runs.push({ server: name, id: d.id });
          await sleep(d.ms);
          return { server: name, id: d.id };
        },
      },
    },
  });
  const listening = await app.listen({ port: 0, host: '127.0.0.1' });
  return { name, port: listening.port, store, warnings, close: () => listening.close() };
}

/** A TCP proxy: forwards to `target`; cut() ends every connection; while `held`, new ones wait. */
class TcpProxy {
  target = 0;
  held = false;
  private readonly sockets = new Set<TcpSocket>();
  private readonly queued: (() => void)[] = [];
  private readonly server: TcpServer;
  port = 0;
  constructor() {
    this.server = createServer((client) => {
      const go = () => {
        const upstream = tcp(this.target, '127.0.0.1');
        for (const s of [client, upstream]) {
          this.sockets.add(s);
          s.on('close', () => this.sockets.delete(s));
          s.on('error', () => {});
        }
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      };
      if (this.held) this.queued.push(go);
      else go();
    });
  }
  async listen(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
  }
  cut(): void {
    for (const s of this.sockets) s.destroy();
  }
  release(): void {
    this.held = false;
    for (const go of this.queued.splice(0)) go();
  }
  close(): Promise<void> {
    this.cut();
    return new Promise((r) => this.server.close(() => r()));
  }
}

const ranFor = (id: string) => runs.filter((r) => r.id === id).map((r) => r.server);

describe('redisIdempotency(): a retried request runs once across servers', () => {
  let redis: RedisBroker;
  let a: Server, b: Server;
  const proxy = new TcpProxy();
  const clients: Live[] = [];
  before(async () => {
    redis = await RedisBroker.start();
    [a, b] = await Promise.all([server('a', redis), server('b', redis)]);
    await Promise.all([a.store.connect(), b.store.connect()]);
    await proxy.listen();
  });
  after(async () => {
    for (const c of clients) c.close();
    await proxy.close();
    await Promise.all([a?.close(), b?.close()]);
    await redis?.dispose();
  });

  /** A client through the proxy, now pointing at A, reconnecting fast. */
  async function client(): Promise<Live> {
    proxy.target = a.port;
    const live = connect(`ws://127.0.0.1:${proxy.port}/live`, { minDelay: 50, maxDelay: 200, onError: () => {} });
    clients.push(live);
    await live.ready;
    return live;
  }

  test('the connection to A is cut after the request was sent; the resend on B gets A outcome, nothing runs again', async () => {
    const live = await client();
    const pending = live.request('pay', { id: 'cut', ms: 300 }, { retries: 3, timeout: 10_000 });
    await waitFor(() => ranFor('cut').length === 1, 'the handler started on A');
    // The reply is lost with the connection; the reconnect waits until A has settled, then goes to B.
    proxy.held = true;
    proxy.cut();
    await waitFor(() => a.store.stats().running === 0, 'A stored its outcome');
    proxy.target = b.port;
    proxy.release();
    assert.deepEqual(await pending, { server: 'a', id: 'cut' }, 'the first outcome, from A');
    assert.deepEqual(ranFor('cut'), ['a'], 'the handler ran once in total');
  });

  test('a resend that reaches B while the handler still runs on A waits for it: one run, A outcome', async () => {
    const live = await client();
    const pending = live.request('pay', { id: 'running', ms: 1500 }, { retries: 3, timeout: 10_000 });
    await waitFor(() => ranFor('running').length === 1, 'the handler started on A');
    proxy.target = b.port;
    proxy.cut();
    await waitFor(() => b.store.stats().waiting === 1, 'the resend waits on B');
    const started = Date.now();
    assert.deepEqual(await pending, { server: 'a', id: 'running' });
    assert.ok(Date.now() - started < 1500 + 1000, 'answered within the poll interval of A settling');
    assert.deepEqual(ranFor('running'), ['a']);
    assert.equal(b.store.stats().waiting, 0);
  });

  test('a server that dies with a key running frees it after the lease: the waiting resend runs it', async () => {
    const dying = redisIdempotency({ url: redis.url, lease: 300 });
    const taker = redisIdempotency({ url: redis.url, lease: 300 });
    try {
      const limits = { window: 60_000, keys: 100 };
      assert.equal(await dying.claim('/live', 'dead.1', limits), null, 'the first claim runs it');
      await dying.close(); // no renewal, no outcome: as a server that died
      const started = Date.now();
      assert.equal(await taker.claim('/live', 'dead.1', limits), null, 'the waiting claim takes the key over');
      assert.ok(Date.now() - started >= 200, 'not before the lease ran out');
      taker.settle('/live', 'dead.1', { ref: 4, text: '{"type":"reply","ref":4,"data":1}' });
      await waitFor(() => taker.stats().running === 0, 'settled');
      await waitFor(async () => (await taker.claim('/live', 'dead.1', limits)) !== null, 'stored');
      assert.deepEqual(await taker.claim('/live', 'dead.1', limits), { ref: 4, text: '{"type":"reply","ref":4,"data":1}' });
    } finally {
      await taker.close();
    }
  });

  test('a key holding something Tachyon did not write: the claim fails, the handler runs here, logged', async () => {
    redis.cli('SET', 'tachyon:once:foreign.1"/live', 'not ours');
    const store = redisIdempotency({ url: redis.url });
    try {
      await assert.rejects(store.claim('/live', 'foreign.1', { window: 1000, keys: 10 }), /holds something else/);
    } finally {
      await store.close();
    }
  });

  test('a frozen Redis (SIGSTOP): the claim gives up after the timeout and runs here; its command drains once Redis answers', async () => {
    const live = await client();
    redis.pause();
    try {
      const started = Date.now();
      assert.deepEqual(await live.request('pay', { id: 'frozen', ms: 0 }, { retries: 1, timeout: 5000 }), { server: 'a', id: 'frozen' });
      assert.ok(Date.now() - started >= 450, 'after the store timeout (500 ms)');
      assert.deepEqual(ranFor('frozen'), ['a']);
      assert.equal(a.store.stats().pending, 1, 'the claim is still unanswered, counted against maxPending');
    } finally {
      redis.resume();
    }
    await waitFor(() => a.store.stats().pending === 0, 'answered once Redis runs again');
  });

  test("Redis down: whenDown 'run' runs the handler here and logs; 'refuse' answers UNAVAILABLE and runs nothing", async () => {
    const strict = await server('strict', redis, { whenDown: 'refuse' });
    try {
      await strict.store.connect();
      await redis.stop();
      const live = await client();
      assert.deepEqual(await live.request('pay', { id: 'down', ms: 0 }, { retries: 1, timeout: 5000 }), { server: 'a', id: 'down' });
      assert.deepEqual(ranFor('down'), ['a']);
      assert.ok(a.warnings.some((w) => /cannot be reached; keyed events run here/.test(w)));
      proxy.target = strict.port;
      proxy.cut();
      await live.ready;
      await waitFor(() => live.status === 'open', 'reconnected to the strict server');
      await assert.rejects(live.request('pay', { id: 'refused', ms: 0 }, { retries: 1, timeout: 5000 }), { code: 'UNAVAILABLE' });
      assert.deepEqual(ranFor('refused'), [], 'nothing ran');
      assert.ok(strict.warnings.some((w) => /keyed events refused/.test(w)));
      // Redis back: claims work again, without a restart of the servers.
      await redis.start();
      await waitFor(() => strict.store.stats().connected, 'reconnected to Redis', 15_000);
      assert.deepEqual(await live.request('pay', { id: 'back', ms: 0 }, { retries: 1, timeout: 5000 }), { server: 'strict', id: 'back' });
    } finally {
      await strict.close();
    }
  });

  test('bad options are refused with a message naming them', () => {
    assert.throws(() => redisIdempotency({ url: 'http://x' }), /url must be a redis:\/\//);
    assert.throws(() => redisIdempotency({ whenDown: 'maybe' as 'run' }), /whenDown must be 'run' or 'refuse'/);
    assert.throws(() => redisIdempotency({ lease: 5 }), /lease must be an integer from 30/);
    assert.throws(() => redisIdempotency({ windw: 1 } as never), /windw/);
    assert.throws(() => redisIdempotency({ url: 'redis://a', sentinel: { name: 'm', nodes: [{ host: 'h', port: 1 }] } }), /not both/);
    const app = new App();
    assert.throws(() => app.ws('/x', { idempotency: { store: {} as never } }), /idempotency.store must be a key store/);
  });
});
