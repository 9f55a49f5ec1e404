// A worker that throws, exits or stalls is logged and replaced; the others keep their
// connections. A factory that throws fails startup with its error.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { cluster as startClusterInProcess, App } from '../../src/index.ts';
import { clientOnEachWorker, fromEachWorker, get, startCluster, waitFor, type Cluster } from './harness.ts';

let cluster: Cluster;
before(async () => {
  cluster = await startCluster({ WORKERS: '2', STALL_MS: '800' });
});
after(async () => {
  // Even with a replaced worker still stuck in its loop, SIGTERM ends the process cleanly.
  const exit = await cluster?.stop();
  assert.deepEqual(exit, { code: null, signal: 'SIGTERM' });
});

for (const [path, how, logged] of [
  ['/crash', 'throws', /worker uncaught exception: replacing it/],
  ['/exit', 'exits', /worker exited with code 7: replacing it/],
  ['/stall', 'stalls', /worker stalled: replacing it/],
] as const) {
  test(`a worker that ${how} is logged and replaced; the other worker's connections are untouched`, async () => {
    // Both workers serving (the previous test's victim is back).
    await waitFor(
      async () => (await fromEachWorker(cluster.port, '/who', 2, 20).catch(() => new Map())).size === 2,
      8000,
      'both workers serving',
    );
    const { byWorker, spare } = await clientOnEachWorker(cluster.port, 2);
    const mark = cluster.lines.length;
    const { status, body } = await get(cluster.port, path);
    assert.equal(status, 200);
    const victim = Object.values(body)[0] as number;
    const other = victim === 1 ? 2 : 1;
    const survivor = byWorker.get(other)!;
    const statuses: string[] = [];
    survivor.onStatus((s) => statuses.push(s));
    try {
      await waitFor(
        () => cluster.lines.slice(mark).some((l) => logged.test(l?.msg ?? '') && l.worker === victim),
        8000,
        'the error log line',
      );
      const line = cluster.lines.slice(mark).find((l) => logged.test(l?.msg ?? ''));
      assert.equal(line.level, 'error');
      if (how === 'throws') assert.match(line.err.message, /worker bug/);
      if (how === 'stalls') assert.match(line.err.message, /event loop stuck/);
      // Replaced: both workers answer again.
      await waitFor(
        async () => (await fromEachWorker(cluster.port, '/who', 2, 20).catch(() => new Map())).size === 2,
        8000,
        'both workers serving',
      );
      assert.equal(await survivor.request('who'), other, 'the survivor still answers on the same connection');
      assert.deepEqual(statuses, [], 'the survivor never disconnected');
    } finally {
      for (const c of [...byWorker.values(), ...spare]) c.close();
    }
  });
}

test('a factory that throws fails cluster() with its error, without hanging', async () => {
  const started = Date.now();
  await assert.rejects(startCluster({ WORKERS: '2', FACTORY_THROWS: '1' }), /factory failed: no database/);
  assert.ok(Date.now() - started < 10_000);
});

test('WORKERS overrides the option; 1 runs in-process; a bad value fails with a clear error', async () => {
  const two = await startCluster({ WORKERS: '2' });
  try {
    assert.equal(two.workers, 2);
    assert.deepEqual([...(await fromEachWorker(two.port, '/who', 2, 10)).keys()].sort(), [1, 2]);
  } finally {
    await two.stop();
  }
  const one = await startCluster({ WORKERS: '1' });
  try {
    assert.equal(one.mode, 'in-process');
    assert.equal(one.workers, 0);
    const { body } = await get(one.port, '/who');
    assert.equal(body.worker, 0);
    assert.equal(body.thread, 0, 'the main thread');
  } finally {
    await one.stop();
  }
  await assert.rejects(startCluster({ WORKERS: 'many' }), /WORKERS must be 'auto' or an integer/);
});

test('bad options and a missing factory are refused before anything starts', async () => {
  const factory = () => new App();
  delete process.env.WORKERS; // it would override the option under test
  await assert.rejects(startClusterInProcess({ workers: -1 }, factory), /workers must be 'auto' or an integer/);
  await assert.rejects(startClusterInProcess({ workers: 2.5 }, factory), /workers must be 'auto' or an integer/);
  await assert.rejects(startClusterInProcess({ port: 70000 }, factory), /Invalid port 70000/);
  await assert.rejects(startClusterInProcess({ stallTimeout: -5 }, factory), /stallTimeout must be a number of ms/);
  await assert.rejects(startClusterInProcess({ signals: 'SIGTERM' as never }, factory), /signals must be/);
  await assert.rejects(startClusterInProcess({}, undefined as never), /needs a factory function/);
  await assert.rejects(startClusterInProcess(null as never, factory), /options must be an object/);
  await assert.rejects(startClusterInProcess({ bus: 'redis' as never }, factory), /bus must be a Bus/);
  await assert.rejects(startClusterInProcess({ bus: { publish() {} } as never }, factory), /bus must be a Bus/);
});
