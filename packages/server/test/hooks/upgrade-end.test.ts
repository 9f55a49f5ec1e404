// The WebSocket handshake's route and outcome on the public API: req.route on upgrade
// requests, socket.route, and the onUpgradeEnd hook (accepted with the socket, refused with
// the status sent, 0 when the client left), over real sockets (docs/hooks.md).
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import { App, HttpError, silentLogger, type Socket, type UpgradeOutcome } from '../../src/index.ts';
import { eventually, openWs, rawWebSocket, recordingLogger, sleep, start, statusOf } from '../helpers.ts';

describe('the upgrade route and outcome', () => {
  test('a parameterized route: req.route and socket.route are the pattern; onUpgradeEnd (101, the socket) runs before onOpen', async () => {
    const seen: string[] = [];
    let upgraded: Socket<any> | null = null;
    const app = new App({ logger: silentLogger });
    app.addHook('onUpgrade', (req) => void seen.push(`onUpgrade ${req.route} ${req.path}`));
    app.addHook('onUpgradeEnd', (req, { status, socket, error }) => {
      seen.push(`onUpgradeEnd ${req.route} ${status} ${socket?.route} ${error}`);
      upgraded = socket;
    });
    app.addHook('onOpen', (ws) => void seen.push(`onOpen ${ws === upgraded}`));
    // One route decides synchronously, one asynchronously (the socket opens outside the callback).
    app.ws('/rooms/:id', { upgrade: (req) => ({ room: req.params.id }) });
    app.ws('/later/:id', { upgrade: async (req) => (await sleep(5), { room: req.params.id }) });
    const srv = await start(app);
    try {
      for (const path of ['/rooms/7', '/later/8']) {
        seen.length = 0;
        const client = await openWs(`ws://127.0.0.1:${srv.port}${path}`);
        await eventually(() => seen.length === 3);
        const pattern = path.startsWith('/rooms') ? '/rooms/:id' : '/later/:id';
        assert.deepEqual(seen, [`onUpgrade ${pattern} ${path}`, `onUpgradeEnd ${pattern} 101 ${pattern} undefined`, 'onOpen true']);
        client.ws.close();
      }
    } finally {
      await srv.close();
    }
  });

  test('socket.route without any hook (the upgrade builds no request)', async () => {
    const app = new App({ logger: silentLogger });
    let route = '';
    app.ws('/feed/:name/*', { open: (ws) => void (route = ws.route) });
    const srv = await start(app);
    try {
      const client = await openWs(`ws://127.0.0.1:${srv.port}/feed/news/a/b`);
      await eventually(() => route !== '');
      assert.equal(route, '/feed/:name/*');
      client.ws.close();
    } finally {
      await srv.close();
    }
  });

  test('refusals: the status sent and the error; no socket', async () => {
    const outcomes: UpgradeOutcome[] = [];
    const app = new App({ logger: silentLogger });
    app.addHook('onUpgrade', (req) => {
      if (req.query.t === 'false') return false;
      if (req.query.t === 'http') throw new HttpError(401, 'who are you');
      if (req.query.t === 'bug') throw new Error('hook bug');
    });
    app.addHook('onUpgradeEnd', (_req, outcome) => void outcomes.push(outcome));
    app.ws('/live', { upgrade: (req) => req.query.t !== 'route' });
    const srv = await start(app);
    try {
      const cases: [string, number][] = [
        ['false', 403],
        ['http', 401],
        ['bug', 500],
        ['route', 401],
      ];
      for (const [t, expected] of cases) {
        outcomes.length = 0;
        assert.equal(statusOf((await rawWebSocket(srv.port, `/live?t=${t}`)).handshake), expected);
        await eventually(() => outcomes.length === 1);
        const [{ status, socket, error }] = outcomes as [UpgradeOutcome];
        assert.equal(status, expected, t);
        assert.equal(socket, null);
        assert.ok(error instanceof Error, t);
      }
      // A refused origin (before the onUpgrade hooks) is told too.
      outcomes.length = 0;
      const foreign = await rawWebSocket(srv.port, '/live', { origin: 'https://evil.example' });
      assert.equal(statusOf(foreign.handshake), 403);
      await eventually(() => outcomes.length === 1);
      assert.equal(outcomes[0]!.status, 403);
    } finally {
      await srv.close();
    }
  });

  test('the client left during an async decision: status 0, nothing else', async () => {
    const outcomes: UpgradeOutcome[] = [];
    let decided: (() => void) | undefined;
    const app = new App({ logger: silentLogger });
    app.addHook('onUpgradeEnd', (_req, outcome) => void outcomes.push(outcome));
    app.ws('/slow', { upgrade: () => new Promise<object>((r) => (decided = () => r({}))) });
    const srv = await start(app);
    try {
      const client = connect(srv.port, '127.0.0.1');
      client.on('error', () => {});
      client.write(
        'GET /slow HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
      );
      await eventually(() => decided !== undefined);
      client.destroy();
      await sleep(100); // uWS sees the close
      decided!();
      await eventually(() => outcomes.length === 1);
      assert.deepEqual(outcomes[0], { status: 0, socket: null, error: undefined });
    } finally {
      await srv.close();
    }
  });

  test('route-level onUpgradeEnd after the app hook; a throwing one is logged and the socket still opens', async () => {
    const { entries, logger } = recordingLogger();
    const seen: string[] = [];
    const app = new App({ logger });
    app.addHook('onUpgradeEnd', () => {
      seen.push('app');
      throw new Error('observer bug');
    });
    app.ws('/live', {
      hooks: { onUpgradeEnd: [async () => void seen.push('route'), async () => Promise.reject(new Error('async observer bug'))] },
    });
    const srv = await start(app);
    try {
      const client = await openWs(`ws://127.0.0.1:${srv.port}/live`);
      await eventually(() => entries.filter((e) => e.msg === 'websocket onUpgradeEnd hook failed').length === 2);
      assert.deepEqual(seen, ['app', 'route']);
      client.ws.close();
    } finally {
      await srv.close();
    }
  });

  test('onUpgradeEnd is an app-level hook: a scope refuses it', async () => {
    const app = new App({ logger: silentLogger });
    await app.register((scope) => {
      assert.throws(() => (scope as unknown as App).addHook('onUpgradeEnd', () => {}), /onUpgradeEnd/);
    });
    await app.close();
  });
});
