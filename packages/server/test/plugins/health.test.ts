import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { createServer, type Server as NetServer } from 'node:net';
import { App, health, type Bus, type BusDelivery, type BusMessage } from '../../src/index.ts';
import { eventually, recordingLogger, sleep, start } from '../helpers.ts';

/** One keep-alive TCP connection: send a request, read exactly one response. */
async function keepAlive(port: number) {
  const socket: Socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let buf = '';
  let wake: (() => void) | null = null;
  socket.on('data', (c) => {
    buf += c.toString('latin1');
    wake?.();
  });
  return {
    async get(path: string): Promise<{ status: number; headers: string; body: string }> {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end !== -1) {
          const headers = buf.slice(0, end);
          const length = Number(/content-length: (\d+)/i.exec(headers)?.[1] ?? 0);
          if (buf.length >= end + 4 + length) {
            const body = buf.slice(end + 4, end + 4 + length);
            buf = buf.slice(end + 4 + length);
            return { status: Number(headers.slice(9, 12)), headers, body };
          }
        }
        await new Promise<void>((r) => (wake = r));
      }
    },
    close: () => socket.destroy(),
  };
}

describe('health', () => {
  test('/healthz and /readyz answer 200 JSON, uncached; other methods and paths pass through', async () => {
    const app = new App();
    app.use(health());
    app.get('/', () => 'home');
    const srv = await start(app);
    try {
      for (const path of ['/healthz', '/readyz']) {
        const res = await fetch(srv.url + path);
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('cache-control'), 'no-store');
        assert.deepEqual(await res.json(), { status: 'ok' });
      }
      const head = await fetch(srv.url + '/healthz', { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(await head.text(), '');
      assert.equal((await fetch(srv.url + '/healthz', { method: 'POST' })).status, 404);
      assert.equal(await (await fetch(srv.url + '/')).text(), 'home');
      assert.equal((await fetch(srv.url + '/healthz/x')).status, 404);
    } finally {
      await srv.close();
    }
  });

  test('readiness is 503 once close() started, while a slow request drains; liveness stays 200', async () => {
    const app = new App();
    app.use(health());
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    app.get('/slow', async () => {
      await released;
      return 'done';
    });
    const srv = await start(app);
    const a = await keepAlive(srv.port);
    const b = await keepAlive(srv.port);
    try {
      assert.equal((await a.get('/readyz')).status, 200);
      assert.equal((await b.get('/healthz')).status, 200);
      const slow = fetch(srv.url + '/slow').then((r) => r.text());
      await eventually(() => app.inflight === 1);
      const closing = srv.close();
      assert.equal(app.draining, true);
      const ready = await a.get('/readyz');
      assert.equal(ready.status, 503);
      assert.deepEqual(JSON.parse(ready.body), { status: 'draining' });
      assert.match(ready.headers, /connection: close/i);
      assert.equal((await b.get('/healthz')).status, 200);
      release();
      assert.equal(await slow, 'done');
      await closing;
    } finally {
      a.close();
      b.close();
    }
  });

  test('checks: sync, async, throwing and hanging ones; the answer says which failed', async () => {
    const { entries, logger } = recordingLogger();
    let busUp = true;
    const app = new App({ logger });
    app.use(
      health({
        timeout: 150,
        checks: {
          bus: () => busUp,
          db: async () => {
            await sleep(5);
            return true;
          },
        },
      }),
    );
    const broken = new App({ logger });
    broken.use(
      health({
        timeout: 150,
        readinessPath: '/ready',
        livenessPath: '/live',
        checks: {
          throws: () => {
            throw new Error('cache unreachable');
          },
          hangs: () => new Promise<boolean>(() => {}),
          fine: () => true,
        },
      }),
    );
    const srv = await start(app);
    const srv2 = await start(broken);
    try {
      let res = await fetch(srv.url + '/readyz');
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { status: 'ok', checks: { bus: 'ok', db: 'ok' } });
      busUp = false;
      res = await fetch(srv.url + '/readyz');
      assert.equal(res.status, 503);
      assert.deepEqual(await res.json(), { status: 'unavailable', failed: ['bus'], checks: { bus: 'failed', db: 'ok' } });
      assert.equal((await fetch(srv.url + '/healthz')).status, 200);
      busUp = true;
      assert.equal((await fetch(srv.url + '/readyz')).status, 200);

      const t0 = Date.now();
      res = await fetch(srv2.url + '/ready');
      assert.ok(Date.now() - t0 < 1000);
      assert.equal(res.status, 503);
      assert.deepEqual((await res.json()).failed, ['throws', 'hangs']);
      assert.ok(entries.some((e) => e.level === 'warn' && e.msg === 'readiness check failed'));
      assert.equal((await fetch(srv2.url + '/live')).status, 200);
      assert.equal((await fetch(srv2.url + '/readyz')).status, 404);
    } finally {
      await srv.close();
      await srv2.close();
    }
  });

  test('options are checked at setup', () => {
    assert.throws(() => health({ checks: { db: true as never } }), /check "db" must be a function/);
    assert.throws(() => health({ livenessPath: 'healthz' }), /livenessPath must be a path/);
    assert.throws(() => health({ readinessPath: '/a', livenessPath: '/a' }), /must differ/);
    assert.throws(() => health({ timeout: 0 }), /timeout must be a positive integer/);
    assert.throws(() => health({ check: {} } as never), /unknown option "check"/);
    assert.throws(() => health(null as never), /options must be an object/);
  });
});

/**
 * A small real bus: publishes travel as JSON lines over TCP to a relay that echoes them to
 * every other connection. ready() is true while the TCP connection is up; it reconnects
 * every 50 ms when the relay is gone (what a Redis or NATS bus does, in miniature).
 */
class TcpBus implements Bus {
  private socket: Socket | null = null;
  private connected = false;
  private closed = false;
  private deliver: BusDelivery | null = null;
  private readonly port: number;
  constructor(port: number) {
    this.port = port;
  }
  ready(): boolean {
    return this.connected;
  }
  start(deliver: BusDelivery): Promise<void> {
    this.deliver = deliver;
    return new Promise((resolve) => this.connect(resolve));
  }
  private connect(onReady?: () => void): void {
    if (this.closed) return;
    const socket = connect(this.port, '127.0.0.1');
    this.socket = socket;
    let buf = '';
    socket.on('connect', () => {
      this.connected = true;
      onReady?.();
    });
    socket.on('data', (chunk) => {
      buf += chunk.toString();
      for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n')) {
        const { topic, message } = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        this.deliver?.(topic, message, false);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      this.connected = false;
      if (!this.closed) setTimeout(() => this.connect(onReady), 50);
    });
  }
  publish(topic: string, message: BusMessage): void {
    if (this.connected) this.socket!.write(JSON.stringify({ topic, message: String(message) }) + '\n');
  }
  interest(): void {}
  close(): void {
    this.closed = true;
    this.socket?.destroy();
  }
}

/** The relay the bus connects to: every line goes to every other connection. */
function relay(port = 0): Promise<{ server: NetServer; port: number; stop(): Promise<void> }> {
  const clients = new Set<Socket>();
  const server = createServer((c) => {
    clients.add(c);
    c.on('data', (d) => {
      for (const o of clients) if (o !== c) o.write(d);
    });
    c.on('close', () => clients.delete(c));
    c.on('error', () => {});
  });
  return new Promise((resolve) =>
    server.listen(port, '127.0.0.1', () =>
      resolve({
        server,
        port: (server.address() as { port: number }).port,
        stop: () =>
          new Promise<void>((r) => {
            for (const c of clients) c.destroy();
            server.close(() => r());
          }),
      }),
    ),
  );
}

test('/readyz is 503 while the bus reports it is disconnected (Bus.ready), 200 again once it reconnects; /healthz stays 200', async () => {
  let r = await relay();
  const bus = new TcpBus(r.port);
  const app = new App({ bus });
  app.use(health({ checks: { db: () => true } }));
  const srv = await start(app);
  try {
    let res = await fetch(srv.url + '/readyz');
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'ok', checks: { db: 'ok' } });
    assert.equal(app.busReady, true);
    const port = r.port;
    await r.stop();
    await eventually(() => !app.busReady);
    res = await fetch(srv.url + '/readyz');
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), { status: 'unavailable', failed: ['bus'], checks: { bus: 'failed' } });
    assert.equal((await fetch(srv.url + '/healthz')).status, 200, 'alive, just not ready');
    r = await relay(port);
    await eventually(() => app.busReady, 3000);
    assert.equal((await fetch(srv.url + '/readyz')).status, 200);
  } finally {
    await srv.close();
    await r.stop();
  }
});

test('a bus without ready() is always ready; one whose ready() throws counts as not ready', async () => {
  const plain: Bus = { start() {}, publish() {}, interest() {}, close() {} };
  const throwing: Bus = {
    ...plain,
    ready: () => {
      throw new Error('broken');
    },
  };
  for (const [bus, status] of [
    [plain, 200],
    [throwing, 503],
  ] as const) {
    const app = new App({ bus });
    app.use(health());
    try {
      assert.equal((await app.request('/readyz')).status, status);
    } finally {
      await app.close();
    }
  }
});
