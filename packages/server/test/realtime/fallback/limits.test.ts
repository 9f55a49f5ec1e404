// The fallback transport's limits: a session whose stream is not read is closed like a slow
// WebSocket (4429) once its buffer passes maxBackpressure, and a cluster of several workers
// refuses a fallback route at start (its stream and POSTs could reach different workers).
import assert from 'node:assert/strict';
import { connect as tcp } from 'node:net';
import { test } from 'node:test';
import { App, InProcessBus, type ClusterMember } from '../../../src/index.ts';
import { eventually, start } from '../../helpers.ts';

test('a stream nobody reads: the session is closed with 4429 past maxBackpressure, and leaves its topics', async () => {
  const app = new App();
  const closed: number[] = [];
  app.ws('/live', { fallback: true, maxBackpressure: 64 * 1024, close: (_ws, code) => void closed.push(code) });
  const running = await start(app);
  try {
    // A raw client that sends the GET, reads the session event, then stops reading.
    const sock = tcp(running.port, '127.0.0.1');
    sock.write('GET /live HTTP/1.1\r\nhost: x\r\naccept: text/event-stream\r\n\r\n');
    let head = '';
    await new Promise<void>((resolve) => {
      sock.on('data', (b) => {
        head += b.toString();
        if (head.includes('"session":"')) {
          sock.pause();
          resolve();
        }
      });
    });
    const id = /"session":"([^"]+)"/.exec(head)![1]!;
    const sub = await fetch(`${running.url}/live?session=${id}`, { method: 'POST', body: '{"type":"subscribe","topic":"flood","ref":1}' });
    assert.equal(sub.status, 204);
    const big = 'x'.repeat(16 * 1024);
    // Far more than the socket buffers and maxBackpressure together.
    for (let i = 0; i < 2000 && closed.length === 0; i++) {
      app.publish('flood', 'chunk', big);
      if (i % 50 === 49) await new Promise((r) => setImmediate(r));
    }
    await eventually(() => closed.length === 1, 5000);
    assert.deepEqual(closed, [4429]);
    assert.equal(app.connections, 0);
    assert.equal(app.subscribers('flood'), 0);
    sock.destroy();
  } finally {
    await running.close();
  }
});

test('cluster() with several workers: a fallback route is refused at start with a clear error', async () => {
  const member: ClusterMember = {
    worker: 1,
    workers: 2,
    bus: () => new InProcessBus(),
    history: undefined,
    connect() {},
    linkMetrics: () => async () => ({ parts: [], missing: [] }),
  };
  const app = new App().joinCluster(member);
  app.ws('/live', { fallback: true });
  await assert.rejects(
    app.listen({ port: 0, host: '127.0.0.1' }),
    /ws \/live: fallback is not supported under cluster\(\) with more than one worker yet/,
  );
  const single = new App().joinCluster({ ...member, workers: 1 });
  single.ws('/live', { fallback: true });
  const running = await start(single);
  await running.close();
});

test('bad fallback options are refused when the route is declared', () => {
  const app = new App();
  assert.throws(() => app.ws('/a', { fallback: 'yes' as never }), /ws \/a: fallback must be true, false or \{ heartbeat \}/);
  assert.throws(() => app.ws('/b', { fallback: { heartbeat: 0 } }), /fallback.heartbeat must be an integer from 1 to 300 seconds/);
  assert.throws(() => app.ws('/c', { fallback: { poll: true } as never }), /fallback: unknown option "poll"/);
});
