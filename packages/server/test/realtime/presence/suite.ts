// The presence behaviour every store runs (docs/presence.md): in memory (one process, both
// "nodes" are the same app), and across servers through a bus (Redis, NATS: two apps, each
// with its own bus connection). Real sockets, real @tachyon/client clients.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { App } from '../../../src/index.ts';
import { connect, type Live, type PresenceChange, type PresenceMember } from '../../../../client/src/index.ts';

export interface PresenceNode {
  app: App;
  /** ws:// URL of the presence route. */
  url: string;
}

export interface PresenceCluster {
  nodes: [PresenceNode, PresenceNode];
  close(): Promise<void>;
}

/** Starts two nodes, each set up with `setupPresenceApp` (the same app twice for a single process). */
export type StartNodes = () => Promise<PresenceCluster>;

/** The routes and topics every node of the suite has. */
export function setupPresenceApp(app: App): void {
  app.topic('room:*', { presence: { events: true, data: (ws) => ({ name: (ws.data as { name: string }).name }) } });
  app.topic('quiet:*', { presence: true });
  app.ws('/ws', {
    upgrade: (req) => {
      const user = typeof req.query.user === 'string' && req.query.user !== '' ? req.query.user : undefined;
      return { id: user, name: `${user ?? 'anon'}!` };
    },
    subscribe: (_ws, topic) => !topic.startsWith('room:secret'),
    // Which cluster() worker serves the socket (0 outside a cluster): cluster.test.ts.
    events: { where: { handler: () => app.worker } },
  });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function eventually<T>(read: () => T | Promise<T>, check: (v: T) => boolean, timeout = 5000, what = 'condition'): Promise<T> {
  const end = Date.now() + timeout;
  for (;;) {
    const v = await read();
    if (check(v)) return v;
    if (Date.now() > end) throw new Error(`${what} not met within ${timeout} ms (last: ${JSON.stringify(v)})`);
    await sleep(10);
  }
}

export const ids = (members: PresenceMember[]) => members.map((m) => m.id).sort();

/** A client of `node` as `user` (none: a socket without an id), open and ready. */
export async function client(node: PresenceNode, user?: string): Promise<Live> {
  const live = connect(user === undefined ? node.url : `${node.url}?user=${user}`, { onError: () => {} });
  await live.ready;
  return live;
}

/** Subscribes and waits until the server has handled it (ping is a barrier). */
export async function join(live: Live, topic: string, listener: (event: string, data: unknown) => void = () => {}): Promise<() => void> {
  const off = live.subscribe(topic, listener);
  await live.ping();
  return off;
}

export function presenceSuite(name: string, start: StartNodes): void {
  describe(`presence behaviour: ${name}`, () => {
    test('three tabs are one member, on any node; it leaves after its last tab', async () => {
      const { nodes, close } = await start();
      const [a, b] = nodes;
      const tabs = [await client(a, 'ann'), await client(a, 'ann'), await client(b, 'ann')];
      const bob = await client(b, 'bob');
      try {
        for (const t of tabs) await join(t, 'room:1');
        await join(bob, 'room:1');
        for (const n of nodes)
          await eventually(
            () => n.app.presence('room:1'),
            (m) => ids(m).join() === 'ann,bob',
            5000,
            'ann and bob listed',
          );
        const listed = await a.app.presence('room:1');
        assert.equal(listed.length, 2, 'three tabs, one member');
        assert.deepEqual(
          listed.find((m) => m.id === 'ann'),
          { id: 'ann', data: { name: 'ann!' } },
        );
        tabs[0]!.close();
        await tabs[1]!.ping();
        await sleep(100);
        for (const n of nodes) assert.deepEqual(ids(await n.app.presence('room:1')), ['ann', 'bob'], 'two tabs left: still there');
        tabs[1]!.close();
        await sleep(100);
        for (const n of nodes)
          assert.deepEqual(ids(await n.app.presence('room:1')), ['ann', 'bob'], 'one tab left, on the other node: still there');
        tabs[2]!.close();
        for (const n of nodes)
          await eventually(
            () => n.app.presence('room:1'),
            (m) => ids(m).join() === 'bob',
            5000,
            'ann gone after her last tab',
          );
      } finally {
        for (const t of [...tabs, bob]) t.close();
        await close();
      }
    });

    test('join and leave events: once per member, across nodes, only on topics that ask for them', async () => {
      const { nodes, close } = await start();
      const [a, b] = nodes;
      const watcher = await client(a, 'watcher');
      const tabs: Live[] = [];
      try {
        const changes: string[] = [];
        watcher.onPresence('room:2', (c: PresenceChange) =>
          changes.push(`${c.type}:${c.member.id}:${(c.member.data as { name: string }).name}`),
        );
        const quiet: string[] = [];
        await join(watcher, 'quiet:2', (event) => quiet.push(event));
        await watcher.ping();
        await eventually(
          () => changes,
          (c) => c.includes('join:watcher:watcher!'),
          5000,
          'own join',
        );
        tabs.push(await client(b, 'cy'), await client(b, 'cy'));
        for (const t of tabs) await join(t, 'room:2');
        for (const t of tabs) await join(t, 'quiet:2');
        await eventually(
          () => changes,
          (c) => c.includes('join:cy:cy!'),
          5000,
          'cy joined',
        );
        tabs[0]!.close();
        await sleep(200);
        assert.deepEqual(
          changes,
          ['join:watcher:watcher!', 'join:cy:cy!'],
          'no second join for the second tab, no leave while a tab is left',
        );
        tabs[1]!.close();
        await eventually(
          () => changes,
          (c) => c.length === 3,
          5000,
          'cy left',
        );
        assert.deepEqual(changes, ['join:watcher:watcher!', 'join:cy:cy!', 'leave:cy:cy!']);
        await eventually(
          () => a.app.presence('quiet:2'),
          (m) => ids(m).join() === 'watcher',
          5000,
          'quiet topic tracked',
        );
        assert.deepEqual(quiet, [], 'no events on a presence topic without events: true');
      } finally {
        for (const t of [watcher, ...tabs]) t.close();
        await close();
      }
    });

    test('live.presence lists members of every node; unsubscribing leaves; sockets without an id are not listed', async () => {
      const { nodes, close } = await start();
      const [a, b] = nodes;
      const dan = await client(a, 'dan');
      const eve = await client(b, 'eve');
      const anon = await client(b);
      try {
        const offDan = await join(dan, 'room:3');
        await join(eve, 'room:3');
        await join(anon, 'room:3');
        await eventually(
          () => eve.presence('room:3'),
          (m) => ids(m).join() === 'dan,eve',
          5000,
          'live.presence across nodes',
        );
        await eventually(
          () => dan.presence('room:3'),
          (m) => ids(m).join() === 'dan,eve',
          5000,
          'and on the other node',
        );
        assert.deepEqual(await anon.presence('room:9'), [], 'an empty presence topic');
        offDan();
        await eventually(
          () => eve.presence('room:3'),
          (m) => ids(m).join() === 'eve',
          5000,
          'dan unsubscribed: gone',
        );
      } finally {
        for (const t of [dan, eve, anon]) t.close();
        await close();
      }
    });
  });
}
