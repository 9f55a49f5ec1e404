// Draining one worker (app.cluster.drain(), cluster/drain.ts): it takes no new connection,
// finishes its in-flight requests, closes its WebSockets with 1012, a client reconnects to the
// other worker, and a fresh thread takes the drained worker's id. Refusals are clear errors.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connect, type Live, type Status } from '../../../client/src/index.ts';
import { drainRefusal } from '../../src/cluster/drain.ts';
import { App, cluster } from '../../src/index.ts';
import { openWs } from '../helpers.ts';
import { connectionOn, fromEachWorker, get, startCluster, waitFor, type Cluster } from './harness.ts';

let c: Cluster;
before(async () => {
  c = await startCluster({ WORKERS: '2' });
});
after(async () => {
  await c?.stop();
});

/** A reconnecting client that lands on `worker` (connections are dealt round-robin), and the close codes it saw. */
async function clientOn(c: Cluster, worker: number): Promise<{ live: Live; codes: number[] }> {
  for (let i = 0; i < 12; i++) {
    const codes: number[] = [];
    const live = connect(`ws://127.0.0.1:${c.port}/live`, { minDelay: 10, maxDelay: 50 });
    live.onStatus((status: Status, info) => status === 'reconnecting' && info.code !== undefined && codes.push(info.code));
    if ((await live.request('who')) === worker) return { live, codes };
    live.close();
  }
  throw new Error(`no client reached worker ${worker}`);
}

test('a drained worker finishes its requests, sends its clients to the other worker, and is replaced', { timeout: 60_000 }, () =>
  drainedAndReplaced(c),
);

// reusePort: each worker listens on the port itself (no acceptor). Draining closes the worker's
// own listen socket; the kernel deals new connections to the others.
test('reusePort mode: the same drain, the worker closing its own listen socket', { timeout: 60_000 }, async () => {
  const r = await startCluster({ WORKERS: '2', REUSE_PORT: '1' });
  try {
    assert.equal(r.mode, 'reuseport');
    await drainedAndReplaced(r);
  } finally {
    await r.stop();
  }
});

async function drainedAndReplaced(c: Cluster) {
  const threads = await fromEachWorker(c.port, '/who', 2);
  const moved = await clientOn(c, 1);
  const stays = await clientOn(c, 2);
  try {
    await drainedWith(c, threads, moved, stays);
  } finally {
    moved.live.close();
    stays.live.close();
  }
}

async function drainedWith(
  c: Cluster,
  threads: Map<number, any>,
  moved: { live: Live; codes: number[] },
  stays: { live: Live; codes: number[] },
) {
  // Slow requests on both workers, in flight when the drain starts: three on connections
  // pinned to each worker, so the drained one surely has some.
  const agents = await Promise.all([1, 1, 1, 2, 2, 2].map((w) => connectionOn(c.port, w)));
  let done: { status: number; body: any }[];
  try {
    const slow = agents.map((agent) => get(c.port, '/slow?ms=700', agent));
    await new Promise((r) => setTimeout(r, 150));
    // Asked by worker 2 (a request landing on worker 1 is skipped), so the answer comes once worker 1 is back.
    let answer: any;
    for (let i = 0; i < 12 && (answer === undefined || answer.skipped); i++) answer = (await get(c.port, '/drain?worker=1&from=2')).body;
    assert.deepEqual(answer, { asker: 2, drained: 1 });
    done = await Promise.all(slow);
  } finally {
    for (const agent of agents) agent.destroy(); // their kept-alive sockets, also when an assertion fails
  }
  assert.deepEqual(
    done.map((r) => r.status),
    [200, 200, 200, 200, 200, 200],
    'in-flight requests finished',
  );
  assert.deepEqual(
    done.map((r) => r.body.worker),
    [1, 1, 1, 2, 2, 2],
    'three of them were on the drained worker',
  );
  // The client on worker 1 got 1012, reconnected at once while worker 1 was out of the acceptor: to worker 2.
  await waitFor(() => moved.codes.length > 0, 5000, 'the moved client to reconnect');
  assert.deepEqual(moved.codes, [1012]);
  assert.equal(await moved.live.request('who'), 2);
  assert.deepEqual(stays.codes, [], 'the other worker kept its client');
  assert.equal(await stays.live.request('who'), 2);
  // Worker 1 serves again, on a fresh thread.
  const after = await fromEachWorker(c.port, '/who', 2);
  assert.notEqual(after.get(1).thread, threads.get(1).thread);
  assert.equal(after.get(2).thread, threads.get(2).thread);
  assert.ok(c.lines.some((l) => l?.msg?.startsWith('draining worker') && l.worker === 1 && l.by === 2));
  assert.ok(c.lines.some((l) => l?.msg === 'drained worker replaced' && l.worker === 1));
  assert.deepEqual(
    c.lines.filter((l) => l?.level === 'error'),
    [],
    'no error logged',
  );
}

test('refusals: an unknown worker, a worker id that is not one', { timeout: 60_000 }, async () => {
  assert.deepEqual((await get(c.port, '/drain?worker=3')).body.error, 'app.cluster.drain(): no worker 3 (worker ids are 1 to 2)');
  assert.match((await get(c.port, '/drain?worker=x')).body.error, /no worker NaN/);
});

// Both drain requests may land on the worker that drains itself: both are in flight on it
// when it closes, and both get their answer.
test('refusals: a second drain at once (the last serving worker) is refused, and both requests are answered', {
  timeout: 60_000,
}, async () => {
  const both = await Promise.all([get(c.port, '/drain?worker=1'), get(c.port, '/drain?worker=2')]);
  const errors = both.map((r) => r.body.error).filter((e) => e !== undefined);
  assert.equal(errors.length, 1, JSON.stringify(both.map((r) => r.body)));
  assert.match(errors[0], /^app\.cluster\.drain\(\): worker [12] is (the only one serving|not serving|already draining)/);
});

test('both workers serve again after the drains', { timeout: 60_000 }, async () => {
  const who = async () => (await get(c.port, '/who')).body.worker as number;
  await waitFor(async () => new Set([await who(), await who()]).size === 2, 20_000, 'two workers');
});

test('drainRefusal: what the primary checks', () => {
  const w = (id: number, serving = true, draining = false) => ({ id, serving, draining });
  assert.equal(drainRefusal([w(1), w(2)], 1, false), undefined);
  assert.equal(drainRefusal([w(1), w(2)], 1, true), 'the cluster is closing');
  assert.equal(drainRefusal([w(1), w(2)], 0, false), 'no worker 0 (worker ids are 1 to 2)');
  assert.equal(drainRefusal([w(1), w(2)], 1.5, false), 'no worker 1.5 (worker ids are 1 to 2)');
  assert.equal(drainRefusal([w(1), w(2)], '1', false), 'no worker 1 (worker ids are 1 to 2)');
  assert.equal(
    drainRefusal([w(1), w(2, false)], 1, false),
    'worker 1 is the only one serving: its clients would have no worker to reconnect to',
  );
  assert.equal(
    drainRefusal([w(1), w(2, true, true)], 1, false),
    'worker 1 is the only one serving: its clients would have no worker to reconnect to',
  );
  assert.equal(drainRefusal([w(1, false), w(2)], 1, false), 'worker 1 is not serving (it is starting or restarting)');
  assert.equal(drainRefusal([w(1, true, true), w(2)], 1, false), 'worker 1 is already draining');
  assert.equal(drainRefusal([w(1)], 1, false), 'worker 1 is the only one serving: its clients would have no worker to reconnect to');
});

test('outside a cluster drain() rejects; server.close({ restart: true }) closes WebSockets with 1012', async () => {
  const app = new App();
  app.ws('/live', {});
  await assert.rejects(app.cluster.drain(1), /not a worker of a cluster\(\) with worker threads/);
  const server = await app.listen({ port: 0, host: '127.0.0.1' });
  const ws = await openWs(`ws://127.0.0.1:${server.port}/live`);
  await server.close({ timeout: 1000, restart: true });
  assert.equal((await ws.closed).code, 1012);
  const inProcess = await cluster({ workers: 1, port: 0, host: '127.0.0.1', signals: [] }, () => new App());
  await assert.rejects(inProcess.drain(1), /needs worker threads/);
  await inProcess.close();
});
