// defineMiddleware (core/middleware-setup.ts): a middleware's setup runs once when the app
// starts, with the public setup API; metrics() is built on it, and so can anyone's be.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { App, defineMiddleware, type WebSocketCounters } from '../../src/index.ts';
import { openWs, start } from '../helpers.ts';

describe('defineMiddleware', () => {
  test("a third party's middleware gets the app's WebSocket counters at start, once, however often it is installed", async () => {
    let setups = 0;
    let counters: WebSocketCounters | undefined;
    let clustered: unknown = 'not asked';
    const counting = defineMiddleware(
      (_req: unknown, _res: unknown, next: () => Promise<void>) => next(),
      (api) => {
        setups++;
        counters = api.websocketCounters();
        assert.equal(api.websocketCounters(), counters, 'one object for every caller');
        assert.equal(api.app.draining, false);
        clustered = api.clusterMetrics(async () => []);
      },
    );
    const app = new App();
    app.use(counting);
    app.use('/admin', counting);
    app.get('/stats', () => ({ in: counters?.messagesIn ?? -1 }));
    app.ws('/live', { events: { ping: { handler: () => 'pong' } } });
    assert.equal(setups, 0, 'nothing runs at declaration');
    const s = await start(app);
    try {
      assert.equal(setups, 1);
      assert.equal(clustered, undefined, 'outside a cluster there is no cluster link');
      const { ws, next } = await openWs(`ws://127.0.0.1:${s.port}/live`);
      ws.send(JSON.stringify({ type: 'event', event: 'ping', ref: 1 }));
      await next((m) => m.ref === 1);
      ws.close();
      const body = (await (await fetch(`http://127.0.0.1:${s.port}/stats`)).json()) as { in: number };
      assert.equal(body.in, 1, 'the hub counted into the object it handed over');
    } finally {
      await s.close();
    }
  });

  test('bad input: clear errors at declaration', () => {
    const mw = () => undefined;
    assert.throws(() => defineMiddleware('x' as never, () => {}), /middleware must be a function/);
    assert.throws(() => defineMiddleware(mw, 'x' as never), /setup must be a function/);
    defineMiddleware(mw, () => {});
    assert.throws(() => defineMiddleware(mw, () => {}), /already has a setup/);
  });

  test('a setup that throws fails the start with its error, never a crash', async () => {
    const app = new App();
    app.use(
      defineMiddleware(
        (_req: unknown, _res: unknown, next: () => Promise<void>) => next(),
        () => {
          throw new Error('setup broke');
        },
      ),
    );
    await assert.rejects(app.listen(0, '127.0.0.1'), /setup broke/);
  });
});
