// cluster() with a broker (docs/cluster.md, "With a broker"): two processes of two worker
// threads each, on a real redis-server and a real nats-server, in both designs: each worker
// connects to the broker (its bus composed with the in-process mesh), or the primary relays
// (one broker connection per process). Real WebSocket clients, one on each of the 4 workers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connect, type Live } from '@tachyon/client';
import { NatsBroker, RedisBroker, type Broker } from './brokers.ts';
import { ClusterProcess, type Kind, type Mode, type Stats } from './cluster-process.ts';
import { range, sleep, waitFor } from './node.ts';

interface Got {
  topic: string;
  from: string;
  seq: number;
}

/** A client on one worker of one process, recording what it receives. */
class Node {
  readonly got: Got[] = [];
  readonly name: string;
  readonly live: Live;
  private readonly off: (() => void)[] = [];
  constructor(name: string, live: Live) {
    this.name = name;
    this.live = live;
  }
  subscribe(topic: string): void {
    this.off.push(this.live.subscribe(topic, (_event, d: any) => this.got.push({ topic, from: d.from, seq: d.seq })));
  }
  unsubscribeAll(): void {
    for (const off of this.off.splice(0)) off();
  }
  seqs(topic: string, from: string): number[] {
    return this.got.filter((g) => g.topic === topic && g.from === from).map((g) => g.seq);
  }
  count(topic: string): number {
    return this.got.filter((g) => g.topic === topic).length;
  }
  pub(topic: string, n: number, extra: Record<string, unknown> = {}): Promise<unknown> {
    return this.live.request('pub', { topic, n, from: this.name, ...extra });
  }
  stats(): Promise<Stats> {
    return this.live.request('stats') as Promise<Stats>;
  }
  counts(topic: string): Promise<{ local: number; cluster: number }> {
    return this.live.request('counts', topic) as Promise<{ local: number; cluster: number }>;
  }
}

/** After the describe(): closes its clients, stops its cluster processes, then its broker. */
function cleanUpAfter(state: () => { broker: Broker | undefined; procs: ClusterProcess[]; clients: Live[] }): void {
  after(async () => {
    const { broker, procs, clients } = state();
    for (const c of clients) c.close();
    await Promise.all(procs.map((p) => p.stop()));
    await broker?.dispose();
  });
}

async function startAll(
  kind: Kind,
  mode: Mode,
  broker: Broker,
  env: Record<string, string> = {},
): Promise<{ procs: ClusterProcess[]; nodes: Node[] }> {
  const procs = await Promise.all([0, 1].map(() => ClusterProcess.start(kind, mode, broker.url, env)));
  const nodes: Node[] = [];
  for (const [p, proc] of procs.entries())
    for (const [w, live] of [...(await proc.clients())].sort((a, b) => a[0] - b[0])) nodes.push(new Node(`P${p + 1}W${w}`, live));
  return { procs, nodes };
}

/** Every worker counts `expected` subscribers of `topic` over both processes. */
async function clusterCount(nodes: Node[], topic: string, expected: number): Promise<void> {
  await waitFor(
    async () => (await Promise.all(nodes.map((n) => n.counts(topic)))).every((c) => c.cluster === expected),
    `${expected} subscribers of ${topic} everywhere`,
  );
}

/** What each process took from the broker on topic channels: per worker (per-worker mode) or its primary's. */
async function brokerReceived(mode: Mode, procs: ClusterProcess[], nodes: Node[]): Promise<number[]> {
  if (mode === 'primary') return Promise.all(procs.map(async (p) => (await p.relayStats())!.received));
  return Promise.all(nodes.map(async (n) => (await n.stats()).broker!.received));
}

async function connected(mode: Mode, procs: ClusterProcess[], nodes: Node[]): Promise<boolean> {
  if (mode === 'primary' && !(await Promise.all(procs.map((p) => p.relayStats()))).every((s) => s!.connected)) return false;
  return (await Promise.all(nodes.map((n) => n.stats()))).every((s) => s.ready);
}

for (const kind of ['redis', 'nats'] as const) {
  for (const mode of ['per-worker', 'primary'] as const) {
    const startBroker = (): Promise<Broker> => (kind === 'redis' ? RedisBroker.start() : NatsBroker.start());

    describe(`cluster() on ${kind}, ${mode}: 2 processes x 2 workers`, () => {
      let broker: Broker;
      let procs: ClusterProcess[] = [];
      let nodes: Node[] = [];
      before(async () => {
        broker = await startBroker();
        ({ procs, nodes } = await startAll(kind, mode, broker));
        await waitFor(() => connected(mode, procs, nodes), 'every bus connected');
      });
      cleanUpAfter(() => ({ broker, procs, clients: nodes.map((n) => n.live) }));

      test('a publish on any worker reaches all 4 workers exactly once, in order; counts are cluster-wide', async () => {
        for (const n of nodes) n.subscribe('fan');
        await clusterCount(nodes, 'fan', 4);
        await sleep(100); // the broker subscriptions (batched per turn) are in place
        await Promise.all(nodes.map((n) => n.pub('fan', 200)));
        await waitFor(() => nodes.every((n) => n.count('fan') >= 800), 'every delivery', 15_000);
        await sleep(300); // a duplicate (an echo through the broker) would have arrived by now
        for (const n of nodes) {
          assert.equal(n.count('fan'), 800, `${n.name}: 4 publishers x 200`);
          for (const from of nodes) assert.deepEqual(n.seqs('fan', from.name), range(200), `${n.name} from ${from.name}: once, in order`);
        }
        for (const n of nodes) n.unsubscribeAll();
        await clusterCount(nodes, 'fan', 0);
      });

      test('interest: a process (or worker) without subscribers of a topic receives nothing of it from the broker', async () => {
        const [p1w1, p1w2, p2w1, p2w2] = nodes as [Node, Node, Node, Node];
        p1w1.subscribe('quiet');
        await clusterCount(nodes, 'quiet', 1);
        await sleep(100);
        const before = await brokerReceived(mode, procs, nodes);
        const relayedBefore = (await p1w2.stats()).thread.relayed;
        await p2w1.pub('quiet', 50);
        await p2w2.pub('quiet', 50, { start: 50 });
        await waitFor(() => p1w1.count('quiet') === 100, 'the subscriber got both');
        await sleep(200);
        const afterwards = await brokerReceived(mode, procs, nodes);
        if (mode === 'primary') {
          assert.equal(afterwards[0]! - before[0]!, 100, 'P1 (one subscriber) took each message once from the broker');
          assert.equal(afterwards[1], before[1], 'P2 (no subscribers) took nothing');
          assert.equal((await p1w2.stats()).thread.relayed, relayedBefore, 'the relay handed nothing to the worker without subscribers');
        } else {
          assert.equal(afterwards[0]! - before[0]!, 100, 'P1W1 (the subscriber) took each message once');
          assert.deepEqual(afterwards.slice(1), before.slice(1), 'the workers without subscribers took nothing');
        }
        assert.deepEqual(p1w1.seqs('quiet', 'P2W1'), range(50));
        assert.deepEqual(p1w1.seqs('quiet', 'P2W2'), range(50, 50));
        assert.equal(p1w2.count('quiet') + p2w1.count('quiet') + p2w2.count('quiet'), 0);
        p1w1.unsubscribeAll();
      });

      test('the broker restarts under traffic: each process resubscribes; no duplicates, order kept; in-process traffic goes on', async () => {
        for (const n of nodes) n.subscribe('live');
        await clusterCount(nodes, 'live', 4);
        await sleep(100);
        const [p1w1, p1w2] = nodes as [Node, Node, Node, Node];
        await p1w1.pub('live', 300, { every: 10 }); // ~3 s of traffic from P1W1
        await sleep(600);
        await broker.restart(300);
        await waitFor(() => p1w2.count('live') >= 300, 'the stream, through the mesh', 15_000);
        await waitFor(() => connected(mode, procs, nodes), 'reconnected', 15_000);
        for (const n of nodes) {
          const seqs = n.seqs('live', 'P1W1');
          assert.deepEqual(
            seqs,
            [...new Set(seqs)].sort((a, b) => a - b),
            `${n.name}: no duplicate, in order`,
          );
        }
        assert.deepEqual(p1w1.seqs('live', 'P1W1'), range(300), 'local: all of it');
        assert.deepEqual(p1w2.seqs('live', 'P1W1'), range(300), 'the sibling worker: all of it (mesh)');
        // After the restart: every current topic was subscribed again, by itself.
        const p2w2 = nodes[3]!;
        await waitFor(
          async () => {
            await p2w2.pub('live', 1, { start: 1000 + p2w2.count('live') });
            await sleep(100);
            return nodes.every((n) => n.seqs('live', 'P2W2').length > 0);
          },
          'traffic across processes again',
          15_000,
        );
        const mark = nodes.map((n) => n.seqs('live', 'P2W2').length);
        await p2w2.pub('live', 100, { start: 5000 });
        await waitFor(() => nodes.every((n, i) => n.seqs('live', 'P2W2').length >= mark[i]! + 100), 'the burst after the restart', 15_000);
        await sleep(200);
        for (const n of nodes)
          assert.deepEqual(
            n.seqs('live', 'P2W2').filter((s) => s >= 5000),
            range(100, 5000),
            `${n.name}: after the restart, once, in order`,
          );
        for (const n of nodes) n.unsubscribeAll();
      });
    });

    describe(`cluster() on ${kind}, ${mode}: the broker is down at start`, () => {
      let broker: Broker;
      let procs: ClusterProcess[] = [];
      let nodes: Node[] = [];
      cleanUpAfter(() => ({ broker, procs, clients: nodes.map((n) => n.live) }));

      test('serves in-process traffic at once, is not ready, connects when the broker comes', async () => {
        broker = kind === 'redis' ? await RedisBroker.unstarted() : await NatsBroker.unstarted();
        ({ procs, nodes } = await startAll(kind, mode, broker));
        const [p1w1, p1w2, p2w1] = nodes as [Node, Node, Node, Node];
        for (const n of nodes) n.subscribe('early');
        await waitFor(async () => (await p1w1.counts('early')).cluster >= 2, 'the sibling worker counted');
        await p1w1.pub('early', 20);
        await waitFor(() => p1w2.count('early') === 20 && p1w1.count('early') === 20, 'in-process delivery without a broker');
        assert.ok(
          (await Promise.all(nodes.map((n) => n.stats()))).every((s) => !s.ready),
          'not ready while the broker is away',
        );
        await broker.start();
        await waitFor(() => connected(mode, procs, nodes), 'connected once the broker is up', 15_000);
        await clusterCount(nodes, 'early', 4);
        await sleep(100);
        await p2w1.pub('early', 50, { start: 100 });
        await waitFor(() => nodes.every((n) => n.seqs('early', 'P2W1').length >= 50), 'across processes', 15_000);
        await sleep(200);
        for (const n of nodes) assert.deepEqual(n.seqs('early', 'P2W1'), range(50, 100), `${n.name}: once, in order`);
        assert.ok(
          procs.every((p) => p.log.some((l) => /bus connected/.test(String(l?.msg ?? '')))),
          'logged',
        );
      });
    });
  }
}

describe("onPublish metadata through the primary's relay (redis)", () => {
  let broker: Broker;
  let procs: ClusterProcess[] = [];
  let nodes: Node[] = [];
  before(async () => {
    broker = await RedisBroker.start();
    ({ procs, nodes } = await startAll('redis', 'primary', broker, { META: '1' }));
    await waitFor(() => connected('primary', procs, nodes), 'every bus connected');
  });
  cleanUpAfter(() => ({ broker, procs, clients: nodes.map((n) => n.live) }));

  test("a worker's publish: its metadata reaches the other process's workers (worker → relay → broker → relay → workers) and its sibling", async () => {
    const [p1w1, p1w2, p2w1, p2w2] = nodes as [Node, Node, Node, Node];
    for (const n of [p1w1, p1w2, p2w2]) n.subscribe('meta');
    await clusterCount(nodes, 'meta', 3);
    await sleep(100);
    await p2w1.pub('meta', 1);
    await waitFor(() => [p1w1, p1w2, p2w2].every((n) => n.count('meta') === 1), 'every delivery');
    const heard = await Promise.all(nodes.map((n) => n.live.request('heard') as Promise<{ topic: string; from: string }[]>));
    const publisher = heard[2]!;
    assert.deepEqual(publisher, [], 'the publisher hears nothing of its own publish');
    const from = heard[0]![0]?.from;
    assert.match(String(from), /^\d+\/\d$/);
    for (const i of [0, 1, 3]) assert.deepEqual(heard[i], [{ topic: 'meta', from }], nodes[i]!.name);
    assert.deepEqual(p1w1.seqs('meta', 'P2W1'), [0], 'the browsers get the message as always');
  });
});

test('a bus on cluster() and on the App too is refused at startup, with the reason', async () => {
  // The check happens in the worker before anything connects: no broker is needed.
  await assert.rejects(ClusterProcess.start('redis', 'both', 'redis://127.0.0.1:1'), /the App must not have a bus option too/);
});

test("history on the primary's relay needs a shared store: the cluster's memory store is refused, with the reason", async () => {
  // Servers elsewhere cannot read the primary's memory, so offsets would disagree between them.
  for (const mode of ['primary', 'per-worker'] as const) {
    const started = ClusterProcess.start('redis', mode, 'redis://127.0.0.1:1', { HISTORY: 'memory' });
    // (A cluster that starts anyway is stopped, so that the failure shows instead of a hang.)
    await assert.rejects(
      started.then(async (p) => (await p.stop(), p)),
      /needs a store all processes share/,
      mode,
    );
  }
});

describe('cluster() on redis, primary: a worker dies', () => {
  let broker: Broker;
  let procs: ClusterProcess[] = [];
  let nodes: Node[] = [];
  cleanUpAfter(() => ({ broker, procs, clients: nodes.map((n) => n.live) }));

  test("the relay forgets the dead worker's subscribers; its replacement is relayed to", async () => {
    broker = await RedisBroker.start();
    ({ procs, nodes } = await startAll('redis', 'primary', broker));
    await waitFor(() => connected('primary', procs, nodes), 'every bus connected');
    const [p1w1, p1w2, p2w1] = nodes as [Node, Node, Node, Node];
    p1w1.subscribe('r');
    p1w2.subscribe('r');
    await clusterCount(nodes, 'r', 2);
    // Its client reconnects (to either worker of P1) and subscribes again: still 2, not 3.
    // Wait for the reconnect itself: a request right after the crash can still be answered
    // by the dying worker (it throws 10 ms later), and would let the check below run early.
    const back = new Promise<void>((resolve) => {
      let lost = false;
      const off = p1w2.live.onStatus((status) => {
        if (status !== 'open') lost = true;
        else if (lost) off(), resolve();
      });
    });
    await p1w2.live.request('crash');
    await back;
    await clusterCount([p1w1, p2w1], 'r', 2);
    await sleep(500); // a stale count of the dead worker would show by now
    assert.equal((await p2w1.counts('r')).cluster, 2, 'no count left behind by the dead worker');
    assert.equal((await procs[0]!.relayStats())!.topics, 1);
    await p2w1.pub('r', 20);
    await waitFor(() => p1w1.count('r') === 20 && p1w2.count('r') === 20, 'both P1 subscribers', 15_000);
    await sleep(200);
    assert.deepEqual(p1w2.seqs('r', 'P2W1'), range(20));
    assert.ok(
      procs[0]!.log.some((l) => /worker uncaught exception: replacing it/.test(String(l?.msg ?? ''))),
      'the death was logged',
    );
  });
});

describe('cluster() on redis, primary: presence across 2 processes x 2 workers', () => {
  let broker: Broker;
  let procs: ClusterProcess[] = [];
  const clients: Live[] = [];
  cleanUpAfter(() => ({ broker, procs, clients }));

  test('members on any worker of either process are listed by all; one user on both processes is one member; leaves reach the others', async () => {
    broker = await RedisBroker.start();
    procs = await Promise.all([0, 1].map(() => ClusterProcess.start('redis', 'primary', broker.url, { PRESENCE: '1' })));
    const open = (p: number, id: string) => {
      const live = connect(`ws://127.0.0.1:${procs[p]!.port}/ws?id=${id}`);
      clients.push(live);
      return live;
    };
    const ann = open(0, 'ann');
    const bob1 = open(1, 'bob');
    const bob2 = open(0, 'bob'); // a second tab, on the other process
    const seen: { type: string; id: string }[] = [];
    // Join events are live only: ann's subscription is in place before bob's tabs join.
    await new Promise<void>((resolve) =>
      ann.onPresence('p:1', ({ type, member }) => seen.push({ type, id: member.id }), { onSubscribed: () => resolve() }),
    );
    bob1.subscribe('p:1', () => {});
    bob2.subscribe('p:1', () => {});
    const ids = async (live: Live) => ((await live.presence('p:1')) as { id: string }[]).map((m) => m.id).sort();
    const expect = async (want: string[]) => {
      for (const live of [ann, bob1, bob2]) {
        if (live.status === 'closed') continue;
        await waitFor(async () => JSON.stringify(await ids(live)) === JSON.stringify(want), `${want} listed`, 10_000);
      }
    };
    await expect(['ann', 'bob']);
    await waitFor(() => seen.some((e) => e.type === 'join' && e.id === 'bob'), 'ann saw bob join');
    bob1.close(); // bob is still there in his other tab
    await sleep(800); // 4 heartbeats: a wrong leave would show by now
    await expect(['ann', 'bob']);
    assert.ok(!seen.some((e) => e.type === 'leave'), 'no leave while a tab is open');
    bob2.close();
    await waitFor(() => seen.some((e) => e.type === 'leave' && e.id === 'bob'), 'ann saw bob leave', 10_000);
    assert.deepEqual(await ids(ann), ['ann']);
  });
});
