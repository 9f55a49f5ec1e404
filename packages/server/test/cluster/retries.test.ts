// Retried requests run once across the workers of a cluster(): the primary keeps every
// worker's idempotency keys (cluster/once-exchange.ts). A client sends a keyed request on a
// connection to one worker, loses the connection, and resends the same key on a connection
// that landed on the other worker: the handler runs once, and the resend gets the first
// outcome, while it still runs and after. Raw WebSocket frames, so the test picks the worker
// (the client would reconnect wherever the acceptor deals it).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startCluster, type Cluster } from './harness.ts';

let cluster: Cluster;
const open: WebSocket[] = [];
before(async () => {
  cluster = await startCluster({ WORKERS: '2' });
});
after(async () => {
  for (const ws of open) ws.close();
  assert.deepEqual(await cluster?.stop(), { code: null, signal: 'SIGTERM' });
});

interface Raw {
  ws: WebSocket;
  worker: number;
  /** Sends a frame and resolves with the reply or error frame of its ref. */
  ask(frame: Record<string, unknown>): Promise<any>;
}

let nextRef = 1;
async function rawSocket(port: number): Promise<Raw> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/live`);
  open.push(ws);
  const waiting = new Map<number, (f: unknown) => void>();
  ws.addEventListener('message', (e) => {
    const f = JSON.parse(String(e.data));
    if (typeof f.ref === 'number') waiting.get(f.ref)?.(f);
  });
  await new Promise((resolve, reject) => (ws.addEventListener('open', resolve), ws.addEventListener('error', reject)));
  const ask = (frame: Record<string, unknown>) => {
    const ref = nextRef++;
    return new Promise<any>((resolve) => {
      waiting.set(ref, resolve);
      ws.send(JSON.stringify({ type: 'event', ref, ...frame }));
    });
  };
  const worker = (await ask({ event: 'who' })).data as number;
  return { ws, worker, ask };
}

/** A raw socket on each of the two workers. */
async function onEachWorker(): Promise<Map<number, Raw>> {
  const by = new Map<number, Raw>();
  for (let i = 0; i < 20 && by.size < 2; i++) {
    const raw = await rawSocket(cluster.port);
    if (by.has(raw.worker)) raw.ws.close();
    else by.set(raw.worker, raw);
  }
  assert.equal(by.size, 2, 'a socket on each worker');
  return by;
}

const runs = async (by: Map<number, Raw>, id: string) => {
  const counts = await Promise.all([...by.values()].map((r) => r.ask({ event: 'runs', data: id })));
  return counts.reduce((n, f) => n + (f.data as number), 0);
};

test('a resend that reconnects to the other worker while the handler runs waits for it: one run, the first outcome', async () => {
  const first = await onEachWorker();
  const [one, two] = [first.get(1)!, first.get(2)!];
  const key = `k-${Date.now()}-moved.1`;
  // Sent on worker 1, which starts the handler (600 ms), then the connection is lost.
  void one.ask({ event: 'pay', key, data: { id: 'moved', ms: 600 } });
  await new Promise((r) => setTimeout(r, 100));
  one.ws.close();
  // The resend lands on worker 2 and waits for worker 1's outcome.
  const resent = await two.ask({ event: 'pay', key, data: { id: 'moved', ms: 0 } });
  assert.equal(resent.type, 'reply');
  assert.deepEqual(resent.data, { worker: 1, id: 'moved' }, 'the first outcome, from worker 1');
  // Once settled, a resend on either worker gets it at once.
  const again = await onEachWorker();
  for (const raw of again.values()) {
    const f = await raw.ask({ event: 'pay', key, data: { id: 'moved', ms: 0 } });
    assert.deepEqual(f.data, { worker: 1, id: 'moved' });
  }
  assert.equal(await runs(again, 'moved'), 1, 'the handler ran once in the whole cluster');
});

test('keys settled on one worker answer resends on the other; another key runs again', async () => {
  const by = await onEachWorker();
  const key = `k-${Date.now()}-settled.1`;
  const f1 = await by.get(2)!.ask({ event: 'pay', key, data: { id: 'settled', ms: 0 } });
  assert.deepEqual(f1.data, { worker: 2, id: 'settled' });
  const f2 = await by.get(1)!.ask({ event: 'pay', key, data: { id: 'settled', ms: 0 } });
  assert.deepEqual(f2.data, { worker: 2, id: 'settled' }, 'worker 1 did not run it');
  const f3 = await by.get(1)!.ask({ event: 'pay', key: `${key}x`, data: { id: 'settled', ms: 0 } });
  assert.deepEqual(f3.data, { worker: 1, id: 'settled' }, 'a new key runs');
  assert.equal(await runs(by, 'settled'), 2);
  // A bad key is refused on every worker, as in one process.
  const bad = await by.get(1)!.ask({ event: 'pay', key: 'has "quotes"', data: { id: 'bad' } });
  assert.equal(bad.type, 'error');
  assert.equal(bad.code, 'BAD_FRAME');
  assert.equal(await runs(by, 'bad'), 0);
});
