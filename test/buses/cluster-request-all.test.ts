// app.requestAll() across two cluster() processes whose primaries relay to Redis
// (cluster({ bus }), docs/cluster.md "With a broker"): the relay forwards the asks and the
// answers (cluster/relay-request-all.ts). Two processes of 2 workers on a real redis-server,
// real WebSocket clients on every worker. A worker of A asks: the replies come from every
// worker of both processes, ids name the process and the worker, the missing list names
// who timed out or had no handler; a worker of B killed mid-ask is logged by B and left out,
// and the ask ends when the rest answered, not at a timeout.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connect, type Live } from '@tachyon/client';
import { RedisBroker } from './brokers.ts';
import { ClusterProcess } from './cluster-process.ts';
import { sleep, waitFor } from './node.ts';

interface Outcome {
  replies: { id: string; data: { who: string } }[];
  missing: { id: string; code: string }[];
}
const ID = /^([0-9a-f]{12}):([12]):(\d+)$/;

describe('cluster({ bus }) on redis, the primary relays: app.requestAll() reaches the other process', () => {
  let broker: RedisBroker;
  let a: ClusterProcess, b: ClusterProcess;
  /** A client per worker of each process, named A1, A2, B1, B2, answering `ack` (B2 after `slowMs`). */
  const on = new Map<string, Live>();
  const extra: Live[] = [];
  let slowMs = 0;
  before(async () => {
    broker = await RedisBroker.start();
    [a, b] = (await Promise.all([0, 1].map(() => ClusterProcess.start('redis', 'primary', broker.url)))) as [
      ClusterProcess,
      ClusterProcess,
    ];
    for (const [p, proc] of [['A', a!] as const, ['B', b!] as const])
      for (const [w, live] of await proc.clients()) {
        const who = `${p}${w}`;
        on.set(who, live);
        live.subscribe('room', () => {});
        live.handle('ack', async (d: unknown) => {
          if (who === 'B2') await sleep(slowMs);
          return { who, echo: d };
        });
      }
    // One more subscriber on B, without an ack handler: NO_HANDLER.
    const bare = connect(`ws://127.0.0.1:${b!.port}/ws`);
    extra.push(bare);
    bare.subscribe('room', () => {});
    await waitFor(
      async () => ((await on.get('A1')!.request('counts', 'room')) as { cluster: number }).cluster === 5,
      'A counts the 5 subscribers of both processes',
      20_000,
    );
  });
  after(async () => {
    for (const c of [...on.values(), ...extra]) c.close();
    await Promise.all([a?.stop(), b?.stop()]);
    await broker?.dispose();
  });

  const ask = (from: string, timeout: number) =>
    on.get(from)!.request('ask', { topic: 'room', data: { q: from }, timeout }, { timeout: 20_000 }) as Promise<Outcome>;

  test('asked from a worker of A: replies from both workers of both processes, ids by process and worker, missing exact', async () => {
    slowMs = 1500;
    const r = await ask('A1', 700);
    assert.deepEqual(r.replies.map((x) => x.data.who).sort(), ['A1', 'A2', 'B1']);
    const byWho = new Map(r.replies.map((x) => [x.data.who, x.id.match(ID)]));
    for (const m of byWho.values()) assert.ok(m !== null, 'ids are "<server>:<worker>:<id>"');
    assert.equal(byWho.get('A1')![2], '1');
    assert.equal(byWho.get('A2')![2], '2');
    assert.equal(byWho.get('A1')![1], byWho.get('A2')![1], "A's workers share A's server id");
    assert.notEqual(byWho.get('B1')![1], byWho.get('A1')![1], 'B has its own server id');
    const codes = r.missing.map((m) => m.code).sort();
    assert.deepEqual(codes, ['NO_HANDLER', 'TIMEOUT'], 'B2 timed out, the bare client has no handler');
    const slow = r.missing.find((m) => m.code === 'TIMEOUT')!.id.match(ID)!;
    assert.equal(slow[1], byWho.get('B1')![1], "B2's id names B");
    assert.equal(slow[2], '2', "and B's worker 2");
    // From the other side too: B's worker 2 asks, A answers through its relay.
    slowMs = 0;
    const back = await ask('B2', 2000);
    assert.deepEqual(back.replies.map((x) => x.data.who).sort(), ['A1', 'A2', 'B1', 'B2']);
    assert.deepEqual(
      back.missing.map((m) => m.code),
      ['NO_HANDLER'],
    );
  });

  test('a worker of B killed mid-ask: B logs it and answers without it; the ask is not held to its timeout', async () => {
    slowMs = 5000;
    const started = Date.now();
    const pending = ask('A2', 8000);
    await sleep(400); // the ask reached B2's client, which takes its time
    await on
      .get('B2')!
      .request('crash')
      .catch(() => {});
    const r = await pending;
    const ms = Date.now() - started;
    assert.deepEqual(r.replies.map((x) => x.data.who).sort(), ['A1', 'A2', 'B1']);
    assert.ok(!r.missing.some((m) => m.code === 'TIMEOUT'), 'B2 is in neither list');
    assert.ok(ms < 8000, `answered when B's other worker had (${ms} ms), not at the timeout`);
    await waitFor(() => b.log.some((l) => /a worker did not answer/.test(String(l?.msg))), "B's warning");
  });
});
