// app.requestAll() in a real cluster (two worker threads): every subscriber in every worker is
// asked, from whichever worker calls it; ids name the worker ("<worker>:<ws.id>") so they stay
// unique; a client's failure comes back from the other thread as a SocketRequestError code.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Live } from '../../../client/src/index.ts';
import { clientOnEachWorker, get, startCluster, waitFor, type Cluster } from './harness.ts';

let cluster: Cluster;
let clients: Live[] = [];
before(async () => {
  cluster = await startCluster({ WORKERS: '2' });
});
after(async () => {
  for (const c of clients) c.close();
  assert.deepEqual(await cluster?.stop(), { code: null, signal: 'SIGTERM' });
});

/** GET /request-all until worker `asker` takes it. */
async function requestAllFrom(asker: number, query = ''): Promise<any> {
  for (let i = 0; i < 40; i++) {
    const { body } = await get(cluster.port, `/request-all${query}`);
    if (body.worker === asker) return body;
  }
  throw new Error(`worker ${asker} never took /request-all`);
}

test('every subscriber of every worker answers, whichever worker asks; failures come back with their code', async () => {
  // Two clients or more on each worker (connections are dealt round-robin; more until both have two).
  const worker = new Map<Live, number>();
  const on = (w: number) => [...worker.values()].filter((x) => x === w).length;
  for (let i = 0; i < 20 && (on(1) < 2 || on(2) < 2); i++) {
    const { byWorker, spare } = await clientOnEachWorker(cluster.port, 2);
    for (const [w, live] of byWorker) worker.set(live, w);
    for (const live of spare) worker.set(live, (await live.request('who')) as number);
  }
  clients = [...worker.keys()];
  assert.ok(on(1) >= 2 && on(2) >= 2, 'two clients on each worker');
  // Every client answers with the worker it is on; one refuses (on worker 2).
  const refuser = clients.find((live) => worker.get(live) === 2)!;
  for (const live of clients) {
    if (live === refuser)
      live.handle('ack', () => {
        throw new Error('not now');
      });
    else live.handle('ack', (d: any) => ({ n: d.n, on: worker.get(live) }));
    live.subscribe('acks', () => {});
    await live.ping();
  }
  await waitFor(async () => (await get(cluster.port, '/counts?topic=acks')).body.cluster === clients.length, 5000, 'subscriber counts');

  for (const asker of [1, 2]) {
    const body = await requestAllFrom(asker);
    const ids = [...body.replies.map((r: any) => r.id), ...body.missing.map((m: any) => m.id)];
    assert.equal(ids.length, clients.length, `asked from worker ${asker}: every subscriber once`);
    assert.equal(new Set(ids).size, ids.length, 'ids are unique across the workers');
    for (const id of ids) assert.match(id, /^[12]:\d+$/);
    assert.equal(body.replies.length, clients.length - 1);
    for (const r of body.replies) assert.deepEqual(r.data, { n: 1, on: Number(r.id.split(':')[0]) }, 'the id names the worker');
    assert.deepEqual(
      body.missing.map((m: any) => [m.id.split(':')[0], m.code, m.message]),
      [['2', 'CLIENT_ERROR', 'not now']],
    );
    const workersSeen = new Set(body.replies.map((r: any) => r.id.split(':')[0]));
    assert.deepEqual([...workersSeen].sort(), ['1', '2']);
  }
});

test('a topic nobody holds, in any worker: empty lists; a timeout counts the silent ones as missing', async () => {
  assert.deepEqual((await requestAllFrom(1, '?topic=nobody')).replies, []);
  const silent = await requestAllFrom(2, '?event=unanswered&timeout=100');
  assert.equal(silent.replies.length, 0);
  assert.deepEqual(new Set(silent.missing.map((m: any) => m.code)), new Set(['NO_HANDLER']));
  assert.equal(silent.missing.length, clients.length);
});
