// The fallback transport end to end: a proxy in front of the server refuses every WebSocket
// upgrade (as a proxy without the Upgrade headers does), so a client with
// transports: ['websocket', 'sse'] falls back to SSE + POSTs; every feature still works.
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server as HttpServer } from 'node:http';
import { connect as tcp, type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { connect } from '../../../../client/src/index.ts';
import { App, MemoryHistoryStore } from '../../../src/index.ts';
import { eventually, start, type Running } from '../../helpers.ts';

/** A plain HTTP proxy that streams responses and refuses upgrades with 400 (until `allowUpgrades`: then it tunnels them). */
export function noUpgradeProxy(
  target: () => number,
): Promise<{ port: number; upgrades: number; allowUpgrades: boolean; close(): Promise<void> }> {
  const state = { upgrades: 0, allow: false };
  const server: HttpServer = createServer((req, res) => {
    const up = httpRequest({ host: '127.0.0.1', port: target(), path: req.url, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
    res.on('close', () => up.destroy());
  });
  server.on('upgrade', (req, socket, head) => {
    state.upgrades++;
    if (state.allow) {
      const up = tcp(target(), '127.0.0.1', () => {
        const lines = [`${req.method} ${req.url} HTTP/1.1`];
        for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
        up.write(`${lines.join('\r\n')}\r\n\r\n`);
        up.write(head);
        up.pipe(socket).pipe(up);
      });
      up.on('error', () => socket.destroy());
      socket.on('error', () => up.destroy());
      return;
    }
    socket.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: (server.address() as AddressInfo).port,
        get upgrades() {
          return state.upgrades;
        },
        get allowUpgrades() {
          return state.allow;
        },
        set allowUpgrades(v: boolean) {
          state.allow = v;
        },
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      }),
    ),
  );
}

const store = new MemoryHistoryStore();
const transportsOpened: string[] = [];

function makeApp(): App {
  const app = new App();
  app.topic('feed', { history: { size: 100, store } });
  app.topic('lobby', { presence: { id: (ws) => (ws.data as { user: string }).user, events: true } });
  app.ws('/live', {
    fallback: true,
    upgrade: (req) => ({
      user: String(req.query.user ?? 'anon'),
      transport: req.header('sec-websocket-key') === undefined ? 'sse' : 'websocket',
    }),
    open: (ws) => void transportsOpened.push(ws.data.transport),
    events: {
      whoami: { handler: (ws) => ws.data.user },
      shout: { handler: (ws, data) => void ws.publish('room', 'shout', data) },
      ask: { handler: (ws) => ws.request('sum', [2, 3]) },
    },
  });
  return app;
}

describe('fallback transport behind a proxy that refuses upgrades', () => {
  let running: Running;
  let app: App;
  let port = 0;
  let proxy: Awaited<ReturnType<typeof noUpgradeProxy>>;
  before(async () => {
    running = await start((app = makeApp()));
    port = running.port;
    proxy = await noUpgradeProxy(() => port);
  });
  after(async () => {
    await running.close();
    await proxy.close();
  });

  test('the client falls back to SSE: events with replies, subscriptions, publishes both ways, server → client requests, presence', async () => {
    const url = `ws://127.0.0.1:${proxy.port}/live?user=ann`;
    const live = connect(url, { transports: ['websocket', 'sse'] });
    live.handle('sum', (xs) => (xs as number[])[0]! + (xs as number[])[1]!);
    await live.ready;
    assert.ok(proxy.upgrades >= 1, 'the WebSocket was tried first');
    assert.equal(await live.request('whoami'), 'ann', 'the upgrade hook ran and its data is the socket data');

    const got: unknown[] = [];
    live.on('room', 'shout', (d) => got.push(d));
    live.on('room', 'news', (d) => got.push(d));
    // A WebSocket client straight to the server, on the same topic.
    const direct = connect(`ws://127.0.0.1:${port}/live`);
    const directGot: unknown[] = [];
    direct.on('room', 'shout', (d) => directGot.push(d));
    await direct.ready;
    await live.ping(); // the subscribe frames were handled before the pong
    app.publish('room', 'news', 'from the app');
    await eventually(() => got.includes('from the app'));
    await direct.request('shout', 'from ws');
    await live.request('shout', 'from sse');
    await eventually(() => got.includes('from ws') && directGot.includes('from sse'));
    assert.ok(!got.includes('from sse'), 'a publish skips its sender');

    assert.equal(await live.request('ask'), 5, 'ws.request() reached the SSE client and came back');

    // Presence: the SSE session is a member, and hears a WebSocket client join.
    const joins: string[] = [];
    live.onPresence('lobby', (e) => void (e.type === 'join' && joins.push(e.member.id)));
    await live.ping();
    assert.deepEqual(
      (await live.presence('lobby')).map((m) => m.id),
      ['ann'],
    );
    const bob = connect(`ws://127.0.0.1:${port}/live?user=bob`);
    bob.subscribe('lobby', () => {});
    await eventually(() => joins.includes('bob'));
    assert.deepEqual((await app.presence('lobby')).map((m) => m.id).sort(), ['ann', 'bob']);
    bob.close();
    live.close();
    direct.close();
  });

  test('default transports: no fallback (unchanged behaviour)', async () => {
    const live = connect(`ws://127.0.0.1:${proxy.port}/live`, { maxRetries: 1, minDelay: 10, onError: () => {} });
    await assert.rejects(live.ready);
    assert.equal(live.status, 'closed');
  });

  test('a server restart: the SSE client reconnects and recovers what it missed by position', async () => {
    const live = connect(`ws://127.0.0.1:${proxy.port}/live`, { transports: ['websocket', 'sse'], minDelay: 50, maxDelay: 200 });
    const got: unknown[] = [];
    live.on('feed', 'n', (d) => got.push(d));
    await live.ready;
    // Publish 1 while connected, restart, publish 2 and 3 while the client is away.
    await live.ping();
    app.publish('feed', 'n', 1);
    await eventually(() => got.length === 1);
    await running.close();
    const second = makeApp();
    const secondRunning = await second.listen({ port, host: '127.0.0.1' });
    second.publish('feed', 'n', 2);
    second.publish('feed', 'n', 3);
    await eventually(() => got.length === 3, 5000);
    assert.deepEqual(got, [1, 2, 3], 'missed messages replayed in order, none twice');
    live.close();
    app = second;
    running = { server: secondRunning, port, url: '', close: () => secondRunning.close({ timeout: 2000 }) };
  });

  test('once WebSockets get through again, the client switches back up without losing or repeating a message', async () => {
    transportsOpened.length = 0;
    const live = connect(`ws://127.0.0.1:${proxy.port}/live`, { transports: ['websocket', 'sse'], probeInterval: 100 });
    const got: unknown[] = [];
    const statuses: string[] = [];
    live.onStatus((st) => statuses.push(st));
    live.on('feed', 'n', (d) => got.push(d));
    await live.ready;
    await live.ping();
    assert.deepEqual(transportsOpened, ['sse']);
    let n = 100;
    app.publish('feed', 'n', n++);
    proxy.allowUpgrades = true;
    // Publishes keep coming while the client switches.
    const until = Date.now() + 5000;
    while (!transportsOpened.includes('websocket') && Date.now() < until) {
      app.publish('feed', 'n', n++);
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.deepEqual(transportsOpened, ['sse', 'websocket']);
    for (let i = 0; i < 5; i++) app.publish('feed', 'n', n++);
    await eventually(() => got.length === n - 100, 3000);
    assert.deepEqual(
      got,
      Array.from({ length: n - 100 }, (_, i) => 100 + i),
      'every message once, in order',
    );
    await eventually(() => app.connections === 1, 3000); // the SSE session is gone
    assert.equal(await live.request('whoami'), 'anon');
    assert.ok(!statuses.includes('reconnecting'), 'the switch is not a reconnect');
    proxy.allowUpgrades = false;
    live.close();
  });
});
