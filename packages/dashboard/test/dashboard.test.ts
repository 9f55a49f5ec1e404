// The dashboard over real sockets: who may open it, what its WebSocket sends while a page is
// open (and that nothing is counted while none is), the opt-in actions, and bad
// input on its WebSocket. The page in a real browser: browser.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { App, HttpError, cluster } from '@tachyon/server';
import { dashboard } from '../src/index.ts';
import type { DashboardView, WorkerSnapshot } from '../src/index.ts';
import { client, freePort, startApp, stats, upgradeStatus } from './helpers.ts';

const AUTH = { authorization: 'Bearer s3cret' };
const auth = (req: { header(name: string): string | undefined }) => req.header('authorization') === AUTH.authorization;
const portOf = (base: string) => Number(new URL(base).port);

describe('dashboard options', () => {
  it('refuses bad options with a clear error', () => {
    assert.throws(() => dashboard(null as never), /options must be an object/);
    assert.throws(() => dashboard({ path: 'admin' }), /path must look like/);
    assert.throws(() => dashboard({ path: '/admin/' }), /path must look like/);
    assert.throws(() => dashboard({ auth: 'yes' as never }), /auth must be a function/);
    assert.throws(() => dashboard({ actions: 'yes' as never }), /actions must be a boolean/);
    assert.throws(() => dashboard({ interval: 10 }), /interval must be/);
    assert.throws(() => dashboard({ colour: 'red' } as never), /unknown option "colour"/);
  });

  it('must be registered on the app, not in a scope', async () => {
    const app = new App();
    await assert.rejects(
      app.register(async (scope) => {
        await scope.register(dashboard({ auth: () => true }));
      }),
      /register it on the app/,
    );
  });
});

describe('who may open it', () => {
  it('without auth, beyond loopback: listen() rejects before it binds, naming the fix', async () => {
    const app = new App();
    app.get('/hello', () => 'hi');
    await app.register(dashboard());
    const port = await freePort();
    await assert.rejects(
      app.listen(port, '0.0.0.0'),
      /dashboard\(\): no auth hook, and the app would listen on 0\.0\.0\.0: give dashboard\(\{ auth \}\), or listen on 127\.0\.0\.1 or ::1 only/,
    );
    await assert.rejects(fetch(`http://127.0.0.1:${port}/hello`), 'nothing listens on the port');
    // Never listening on loopback, the page stays refused (app.request() does not listen).
    const res = await app.request('/_tachyon');
    assert.equal(res.status, 403);
    assert.match(await res.text(), /dashboard disabled: not listening on loopback/);
    assert.equal((await app.request('/hello')).status, 200, 'the app itself answers');
    await app.close();
  });

  it('without auth, a cluster() beyond loopback fails to start (in-process: listen())', async () => {
    const start = cluster({ workers: 0, port: 0, host: '0.0.0.0', signals: [] }, async () => {
      const app = new App();
      await app.register(dashboard());
      return app;
    });
    await assert.rejects(start, /no auth hook, and the app would listen on 0\.0\.0\.0/);
  });

  it('without auth on loopback: served, with a strict Content-Security-Policy', async () => {
    const s = await startApp();
    try {
      const res = await fetch(`${s.base}/_tachyon`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /text\/html/);
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /script-src 'self'/);
      assert.doesNotMatch(csp, /unsafe/);
      const html = await res.text();
      assert.match(html, /src="\/_tachyon\/uplot\.js"/);
      assert.doesNotMatch(html, /https?:\/\//, 'nothing from another origin');
      const uplot = await fetch(`${s.base}/_tachyon/uplot.js`);
      assert.equal(uplot.status, 200);
      assert.match(await uplot.text(), /uPlot/);
    } finally {
      await s.close();
    }
  });

  it('with auth: a stranger gets 403 on the page, its assets and the WebSocket; the operator gets in', async () => {
    const s = await startApp({ auth }, '0.0.0.0');
    try {
      for (const path of ['/_tachyon', '/_tachyon/dashboard.js', '/_tachyon/uplot.js'])
        assert.equal((await fetch(`${s.base}${path}`)).status, 403, path);
      assert.equal((await fetch(`${s.base}/_tachyon`, { headers: { authorization: 'Bearer wrong' } })).status, 403);
      assert.equal(await upgradeStatus(portOf(s.base), '/_tachyon/ws'), 403);
      assert.equal(await upgradeStatus(portOf(s.base), '/_tachyon/ws', { authorization: 'Bearer wrong' }), 403);
      assert.equal((await fetch(`${s.base}/_tachyon`, { headers: AUTH })).status, 200);
      assert.equal(await upgradeStatus(portOf(s.base), '/_tachyon/ws', AUTH), 101);
    } finally {
      await s.close();
    }
  });

  it('an auth hook may answer 401 itself (an HttpError)', async () => {
    const s = await startApp({
      auth: () => {
        throw new HttpError(401, 'Unauthorized', { headers: { 'www-authenticate': 'Basic realm="tachyon"' } });
      },
    });
    try {
      const res = await fetch(`${s.base}/_tachyon`);
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('www-authenticate'), 'Basic realm="tachyon"');
      assert.equal(await upgradeStatus(portOf(s.base), '/_tachyon/ws'), 401);
    } finally {
      await s.close();
    }
  });
});

describe('live numbers', () => {
  it('collects nothing while no page is open; once open, requests, latency, WebSocket traffic, topics and closes move', async () => {
    const s = await startApp();
    try {
      for (let i = 0; i < 20; i++) await (await fetch(`${s.base}/hello`)).text();
      // Read this worker's counters the way another worker would: nothing was counted for the
      // 20 requests above, since no page was open (this read turns collecting on for 5 s).
      const before = await s.app.cluster.request<WorkerSnapshot>(0, 'tachyon:dashboard', { op: 'snapshot' });
      assert.deepEqual(before.routes, {});
      assert.deepEqual(before.closes, {});

      const page = await client(`${s.ws}/_tachyon/ws`);
      const first: DashboardView = (await page.next(stats)).data;
      assert.equal(first.workers, 0);
      assert.equal(first.workerStats.length, 1);
      assert.equal(first.workerStats[0]!.worker, 0);
      assert.ok(first.workerStats[0]!.heapUsed > 0);

      const user = await client(`${s.ws}/live?user=ann`);
      user.ws.send(JSON.stringify({ type: 'subscribe', topic: 'room:1', ref: 1 }));
      await user.next((m) => m.type === 'subscribed');
      s.app.publish('room:1', 'news', 1);
      s.app.publish('room:1', 'news', 2);
      const load = async () => {
        for (let i = 0; i < 40; i++) {
          await (await fetch(`${s.base}/users/${i}`)).text();
          user.ws.send(JSON.stringify({ type: 'event', event: 'ping', ref: i + 2 }));
        }
        await (await fetch(`${s.base}/boom`)).text();
        await (await fetch(`${s.base}/hello`, { method: 'PROPFIND' })).text(); // a method a client made up
      };
      await load();
      const moving = page.messages.length;
      let view: DashboardView | undefined;
      for (let i = 0; i < 20 && view === undefined; i++) {
        const m = await page.next((x) => stats(x) && page.messages.indexOf(x) >= moving && x.data.routes.length > 0);
        page.messages.splice(page.messages.indexOf(m), 1);
        view = m.data;
      }
      assert.ok(view !== undefined);
      const users = view.routes.find((r) => r.route === 'GET /users/:id');
      assert.ok(users !== undefined, JSON.stringify(view.routes));
      assert.ok(users.rps > 0);
      assert.ok(users.p50 > 0 && users.p50 <= users.p90 && users.p90 <= users.p99, JSON.stringify(users));
      assert.equal(view.routes.find((r) => r.route === 'GET /boom')?.errors, 1);
      assert.ok(!view.routes.some((r) => r.route.includes('_tachyon')), 'the dashboard does not count itself');
      assert.ok(!view.routes.some((r) => r.route.startsWith('PROPFIND')), 'unknown methods mint no rows');
      assert.ok(
        view.routes.some((r) => r.route.startsWith('OTHER ')),
        JSON.stringify(view.routes),
      );
      assert.equal(view.connections, 2);
      const room = view.topics.find((t) => t.topic === 'room:1');
      assert.deepEqual(room, { topic: 'room:1', subscribers: 1, presence: 1, history: 2 });

      // Closes by code: one user socket closes with 4000.
      user.ws.close(4000, 'bye');
      await user.closed;
      const closed = await page.next((m) => stats(m) && m.data.closes['4000'] === 1);
      assert.equal(closed.data.connections, 1);
      // WebSocket messages in were counted while the page was open.
      const ws = await s.app.cluster.request<WorkerSnapshot>(0, 'tachyon:dashboard', { op: 'snapshot' });
      assert.ok(ws.ws.in >= 41, `messages in: ${ws.ws.in}`);
      page.ws.close();
      await page.closed;
    } finally {
      await s.close();
    }
  });
});

describe('actions', () => {
  it('read-only by default: a disconnect asked for is refused with an error, the socket stays', async () => {
    const s = await startApp();
    try {
      const victim = await client(`${s.ws}/live?user=bob`);
      const page = await client(`${s.ws}/_tachyon/ws`);
      const view: DashboardView = (await page.next(stats)).data;
      assert.equal(view.actions, false);
      assert.deepEqual(view.sockets, [], 'no socket list without actions');
      const id = [...s.app.sockets()].find((x) => (x.data as { id?: string }).id === 'bob')!.id;
      page.ws.send(JSON.stringify({ type: 'event', event: 'disconnect', data: { worker: 0, id }, ref: 1 }));
      const error = await page.next((m) => m.type === 'error' && m.ref === 1);
      assert.match(error.message, /actions are off/);
      page.ws.send(JSON.stringify({ type: 'event', event: 'drain', data: { worker: 0 }, ref: 2 }));
      assert.match((await page.next((m) => m.type === 'error' && m.ref === 2)).message, /actions are off/);
      assert.equal(victim.ws.readyState, WebSocket.OPEN);
      victim.ws.close();
      page.ws.close();
    } finally {
      await s.close();
    }
  });

  it('with actions: true, the page lists sockets and disconnects one (1008); an unknown id is not found', async () => {
    const s = await startApp({ actions: true });
    try {
      const victim = await client(`${s.ws}/live?user=eve`);
      const page = await client(`${s.ws}/_tachyon/ws`);
      const view: DashboardView = (await page.next((m) => stats(m) && m.data.sockets.length === 2)).data;
      const id = [...s.app.sockets()].find((x) => (x.data as { id?: string }).id === 'eve')!.id;
      assert.ok(view.sockets.some((x) => x.id === id && x.worker === 0 && x.ip === '127.0.0.1'));
      page.ws.send(JSON.stringify({ type: 'event', event: 'disconnect', data: { worker: 0, id }, ref: 1 }));
      assert.deepEqual((await page.next((m) => m.type === 'reply' && m.ref === 1)).data, { closed: true });
      assert.equal((await victim.closed).code, 1008);
      page.ws.send(JSON.stringify({ type: 'event', event: 'disconnect', data: { worker: 0, id: 999_999 }, ref: 2 }));
      assert.deepEqual((await page.next((m) => m.type === 'reply' && m.ref === 2)).data, { closed: false });
      page.ws.close();
    } finally {
      await s.close();
    }
  });
});

describe('bad input on the dashboard WebSocket', () => {
  it('answers errors, refuses subscriptions, closes on an oversized frame, and keeps serving', async () => {
    const s = await startApp({ actions: true });
    try {
      const page = await client(`${s.ws}/_tachyon/ws`);
      await page.next(stats);
      const bad: [unknown, RegExp][] = [
        [{ worker: 'one', id: 1 }, /whole numbers/],
        [{ worker: 0, id: -1 }, /whole numbers/],
        [null, /whole numbers/],
        [{ worker: 7, id: 1 }, /no worker 7/],
      ];
      for (const [i, [data, message]] of bad.entries()) {
        page.ws.send(JSON.stringify({ type: 'event', event: 'disconnect', data, ref: 10 + i }));
        const error = await page.next((m) => m.type === 'error' && m.ref === 10 + i);
        assert.match(error.message, message, JSON.stringify(error));
      }
      const badDrains: [unknown, RegExp][] = [
        [{ worker: 'one' }, /drain needs \{ worker \}: a whole number/],
        [null, /drain needs \{ worker \}/],
        [{ worker: 7 }, /no worker 7 \(only 0 outside a cluster\)/],
        [{ worker: 0 }, /app\.cluster\.drain\(\): this app is not a worker of a cluster\(\) with worker threads/],
      ];
      for (const [i, [data, message]] of badDrains.entries()) {
        page.ws.send(JSON.stringify({ type: 'event', event: 'drain', data, ref: 30 + i }));
        const error = await page.next((m) => m.type === 'error' && m.ref === 30 + i);
        assert.match(error.message, message, JSON.stringify(error));
      }
      page.ws.send(JSON.stringify({ type: 'event', event: 'drop-tables', ref: 20 }));
      assert.equal((await page.next((m) => m.type === 'error' && m.ref === 20)).type, 'error');
      page.ws.send(JSON.stringify({ type: 'subscribe', topic: 'room:1', ref: 21 }));
      assert.equal((await page.next((m) => m.ref === 21)).type, 'denied');
      page.ws.send('{"type":"event", not json');
      page.ws.send(new Uint8Array([1, 2, 3]));
      // Still alive and still updating after all of that.
      const count = page.messages.filter(stats).length;
      await page.next((m) => stats(m) && page.messages.filter(stats).length > count + 1);
      page.ws.send('x'.repeat(4096));
      assert.equal((await page.closed).code, 1009);
      assert.equal((await fetch(`${s.base}/hello`)).status, 200, 'the app serves on');
    } finally {
      await s.close();
    }
  });
});
