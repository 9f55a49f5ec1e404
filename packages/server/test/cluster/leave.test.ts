// The order in which a cluster worker ends (cluster/leave.ts): out of the acceptor, then its
// connections dropped on more than one loop turn (the acceptor's last queued sockets are adopted
// a turn after the release), then the thread ends. The real thing, under churn, is
// exit-churn.test.ts; this pins the order with plain steps that record what ran when.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { leave, RELEASE_TIMEOUT } from '../../src/cluster/leave.ts';

/** Steps that log their calls; `turned[i]`: a loop turn passed after the i-th drop. */
function recorder() {
  const log: string[] = [];
  const turned: boolean[] = [];
  const steps = {
    drop: () => {
      const i = turned.length;
      turned.push(false);
      setImmediate(() => (turned[i] = true));
      log.push('drop');
    },
    exit: () => void log.push('exit'),
  };
  return { log, turned, steps };
}

test('leave(): released first, then dropped on separate loop turns, then the exit', async () => {
  const { log, turned, steps } = recorder();
  const release = () =>
    new Promise<void>((resolve) => {
      log.push('leaving');
      setTimeout(() => {
        log.push('released');
        resolve();
      }, 30);
    });
  await leave({ ...steps, release });
  assert.equal(log.slice(0, 3).join(), 'leaving,released,drop');
  assert.equal(log.at(-1), 'exit');
  const drops = log.filter((s) => s === 'drop').length;
  assert.ok(drops >= 2, `dropped more than once (${drops})`);
  assert.equal(turned[0], true, 'a loop turn passed between the first drop and the next');
});

test('leave(): outside an acceptor (no release) it drops and exits at once', async () => {
  const { log, steps } = recorder();
  const started = Date.now();
  await leave(steps);
  assert.equal(log[0], 'drop');
  assert.equal(log.at(-1), 'exit');
  assert.ok(Date.now() - started < RELEASE_TIMEOUT, 'no wait for a release');
});

test('leave(): a primary that never answers delays the exit by RELEASE_TIMEOUT, not forever', async () => {
  const { log, steps } = recorder();
  const started = Date.now();
  await leave({ ...steps, release: () => new Promise<void>(() => {}) });
  const took = Date.now() - started;
  assert.equal(log.at(-1), 'exit');
  assert.ok(took >= RELEASE_TIMEOUT - 50, `waited for the release (${took} ms)`);
  assert.ok(took < RELEASE_TIMEOUT + 5000, `then went anyway (${took} ms)`);
});
