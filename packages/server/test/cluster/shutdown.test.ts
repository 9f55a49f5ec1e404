// SIGTERM on the primary under load: it stops accepting, every worker finishes its in-flight
// requests, WebSockets get 1001, and the process ends. No accepted request fails.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openWs } from '../helpers.ts';
import { get, startCluster } from './harness.ts';

/** How long before the signal a connection may still sit in the listen backlog, unaccepted (under c8). */
const BACKLOG_MS = 20;

test('SIGTERM under load: in-flight requests finish, WebSockets close with 1001, nothing accepted fails', async () => {
  const cluster = await startCluster({ WORKERS: '2' });
  const sockets = await Promise.all([1, 2, 3, 4].map(() => openWs(`ws://127.0.0.1:${cluster.port}/live`)));
  let signalledAt = Infinity;
  let ok = 0;
  let finishedAfterSignal = 0;
  let refused = 0;
  const failures: string[] = [];
  const loop = async () => {
    for (;;) {
      const startedAt = Date.now();
      try {
        const { status } = await get(cluster.port, '/slow?ms=150');
        if (status !== 200) failures.push(`status ${status}`);
        else if (Date.now() > signalledAt) finishedAfterSignal++;
        ok++;
      } catch (err: any) {
        // Refused: the port is closed, the request was never accepted. A connection made
        // after the signal can also be reset rather than refused: it reached the kernel's
        // backlog just as the listen socket closed, and the app never accepted it (seen once
        // under c8, also for connections made 1-3 ms before the signal). A request started
        // earlier (its handler takes 150 ms) and lost is a failure.
        if (err.code === 'ECONNREFUSED' || (err.code === 'ECONNRESET' && startedAt > signalledAt - BACKLOG_MS)) refused++;
        else failures.push(`${err.code ?? err.message} (started ${startedAt - signalledAt} ms from the signal)`);
        return;
      }
    }
  };
  const loops = Array.from({ length: 16 }, loop);
  await new Promise((r) => setTimeout(r, 500));
  signalledAt = Date.now();
  const exit = await cluster.stop('SIGTERM');
  await Promise.all(loops);
  const closes = await Promise.all(sockets.map((s) => s.closed));
  assert.deepEqual(exit, { code: null, signal: 'SIGTERM' }, 'ended by its own re-raised SIGTERM');
  assert.deepEqual(failures, [], 'no accepted request failed');
  assert.ok(ok > 16, `requests served (${ok})`);
  assert.ok(finishedAfterSignal > 0, 'requests in flight at the signal finished after it');
  assert.equal(refused, 16, 'each client stopped at a refused (or, in the backlog, reset) connection');
  assert.deepEqual(
    closes.map((c) => c.code),
    [1001, 1001, 1001, 1001],
  );
  assert.ok(
    cluster.lines.some((l) => l?.msg === 'shutting down' && l.signal === 'SIGTERM'),
    'logged',
  );
});
