// A worker that ends (process.exit() in the app, or an uncaught error) while new connections
// keep arriving: the acceptor (in the primary thread) must stop handing it sockets before its
// thread, and its uWS loop, are gone (else SIGSEGV), and every socket it adopted, the last ones
// the acceptor queued included, must be closed before the thread ends (else SIGABRT: Node finds
// uWS's poll handle open). cluster/leave.ts orders this; docs/cluster.md, Faults.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { fromEachWorker, get, startCluster, waitFor, type Cluster } from './harness.ts';

let cluster: Cluster;
before(async () => {
  cluster = await startCluster({ WORKERS: '2' });
});
after(async () => {
  // A crash already failed the test; print what the process said about it.
  const exit = await cluster?.stop();
  if (exit?.signal !== 'SIGTERM')
    console.log(
      cluster.lines
        .filter((l) => typeof l === 'string')
        .slice(-20)
        .join('\n'),
    );
});

/** Opens a WebSocket and closes it once open (or failed): one accepted connection each. */
function churnOne(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/live`);
    const timer = setTimeout(() => done(false), 2000);
    const done = (ok: boolean) => {
      clearTimeout(timer);
      try {
        ws.close();
      } catch {}
      resolve(ok);
    };
    ws.onopen = () => done(true);
    ws.onerror = () => done(false);
  });
}

/** An open WebSocket, and the code it was closed with once it is (null while open). */
async function openSocket(port: number): Promise<{ ws: WebSocket; code: number | null }> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/live`);
  const socket = { ws, code: null as number | null };
  ws.onclose = (event) => (socket.code = event.code);
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error('the WebSocket did not open'));
  });
  return socket;
}

function bothServing(what: string): Promise<void> {
  return waitFor(async () => (await fromEachWorker(cluster.port, '/who', 2, 20).catch(() => new Map())).size === 2, 10_000, what);
}

for (const [path, how, logged, rounds] of [
  ['/exit', 'calls process.exit()', /worker exited with code 7: replacing it/, 6],
  ['/crash', 'throws', /worker uncaught exception: replacing it/, 4],
] as const) {
  test(`a worker that ${how} while WebSockets connect and close is replaced; the process survives`, async () => {
    let opened = 0;
    for (let round = 0; round < rounds; round++) {
      await bothServing(`both workers serving before round ${round}`);
      const mark = cluster.lines.length;
      const { status } = await get(cluster.port, path);
      assert.equal(status, 200);
      // Churn through the exit (it fires 10 ms after the answer) and the restart.
      const until = Date.now() + 800;
      while (Date.now() < until && cluster.proc.exitCode === null && cluster.proc.signalCode === null) {
        const results = await Promise.all(Array.from({ length: 8 }, () => churnOne(cluster.port)));
        opened += results.filter(Boolean).length;
      }
      assert.equal(cluster.proc.signalCode, null, `the process died in round ${round}: ${cluster.proc.signalCode}`);
      assert.equal(cluster.proc.exitCode, null, `the process exited in round ${round}`);
      await waitFor(() => cluster.lines.slice(mark).some((l) => logged.test(l?.msg ?? '')), 8000, 'the exit logged');
    }
    assert.ok(opened > rounds * 8, `WebSockets kept opening through the restarts (${opened})`);
  });
}

test("process.exit() in a handler returns: its answer goes out; the worker's WebSockets get 1012, the other's stay open", async () => {
  await bothServing('both workers serving');
  // Dealt round-robin: three on each worker.
  const sockets: { ws: WebSocket; code: number | null }[] = [];
  for (let i = 0; i < 6; i++) sockets.push(await openSocket(cluster.port));
  try {
    const mark = cluster.lines.length;
    const { status, body } = await get(cluster.port, '/exit-now');
    assert.equal(status, 200);
    assert.equal(body.after, true, 'the code after process.exit() ran');
    await waitFor(
      () => cluster.lines.slice(mark).some((l) => /worker exited with code 7/.test(l?.msg ?? '') && l.worker === body.exiting),
      8000,
      'the exit logged',
    );
    await waitFor(() => sockets.some((s) => s.code !== null), 5000, "the exiting worker's WebSockets closed");
    await sleep(300); // the rest of them
    const codes = sockets.map((s) => s.code).filter((c) => c !== null);
    assert.ok(codes.length < sockets.length, `the other worker's WebSockets stay open (${codes.length} closed)`);
    assert.deepEqual(
      codes,
      codes.map(() => 1012),
      'closed with a close frame (1012: service restart), not cut (1006)',
    );
  } finally {
    for (const s of sockets) s.ws.close();
  }
});

test('process.exit() with a bad code throws as it does in Node: the request gets a 500, the worker stays', async () => {
  await bothServing('both workers serving');
  const threads = [...(await fromEachWorker(cluster.port, '/who', 2)).values()].map((w) => w.thread).sort();
  const mark = cluster.lines.length;
  const { status } = await get(cluster.port, '/exit-now?code=bad');
  assert.equal(status, 500);
  await sleep(500);
  assert.ok(!cluster.lines.slice(mark).some((l) => /replacing it/.test(l?.msg ?? '')), 'no worker replaced');
  const now = [...(await fromEachWorker(cluster.port, '/who', 2)).values()].map((w) => w.thread).sort();
  assert.deepEqual(now, threads, 'the same worker threads serve');
});
