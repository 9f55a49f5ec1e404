// event.platform's bad inputs and hooks.ws `topics`, on a plain Tachyon app (no SvelteKit
// build: the built fixture covers the working paths, helpers/suite.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { App } from '@tachyon/server';
import { connect } from '@tachyon/client';
import { installWebSocket, platformFor } from '@tachyon/sveltekit/runtime';

describe('event.platform', () => {
  it('refuses bad arguments with clear errors, even when no socket would receive', async () => {
    const p = platformFor(new App());
    assert.throws(() => p.send('u1', 'bad"name'), /Invalid event name "bad\\"name"/);
    assert.throws(() => p.send('u1', ''), /Invalid event name ""/);
    assert.throws(() => p.send('u1', 'ok', { n: 1n }), /BigInt/);
    assert.throws(() => p.send('u1', 'ok', () => 1), /not JSON-serializable/);
    assert.throws(() => p.send({} as never, 'ok'), /`to` must be a Socket or a user id/);
    assert.throws(() => p.sendTo('admins' as never, 'ok'), /`filter` must be a function/);
    await assert.rejects(p.request({} as never, 'ok'), /`ws` must be a Socket/);
    await assert.rejects(p.presence('room:x'), /has no presence/);
    assert.equal(p.send('nobody', 'ok', 1), 0);
    assert.deepEqual(p.pressure, { connections: 0, backpressured: 0, buffered: 0, inflight: 0, draining: false });
    assert.equal(platformFor(p.app), p, 'one object per app');
  });

  it('hooks.ws `topics` declares topic options; a bad value names the file', async () => {
    assert.throws(
      () => installWebSocket(new App(), '/ws', { topics: [] as never }, 'src/hooks.ws.ts'),
      /src\/hooks\.ws\.ts: "topics" must be an object/,
    );
    assert.throws(() => installWebSocket(new App(), '/ws', { topics: { 'room:*': { presense: true } as never } }), /presense/);
    const app = new App();
    installWebSocket(app, '/ws', { topics: { 'room:*': { presence: true } }, upgrade: (req) => ({ id: req.query.id }) });
    const server = await app.listen({ port: 0, host: '127.0.0.1' });
    const live = connect(`ws://127.0.0.1:${server.port}/ws?id=7`, { maxRetries: 0 });
    try {
      live.subscribe('room:a', () => {});
      await live.ready;
      await live.ping();
      const p = platformFor(app);
      assert.deepEqual(await p.presence('room:a'), [{ id: '7' }]);
      const got = new Promise((resolve) => live.onEvent('dm', resolve));
      assert.equal(p.send(7, 'dm', 'hi'), 1, 'a numeric user id');
      assert.equal(await got, 'hi');
      live.close();
      for (let i = 0; i < 100 && p.connections > 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(p.send(7, 'dm', 'gone'), 0, 'a closed socket leaves the registry');
      assert.equal(
        p.sendTo(() => true, 'dm'),
        0,
      );
    } finally {
      live.close();
      await server.close({ timeout: 1000 });
    }
  });
});
