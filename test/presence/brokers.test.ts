// Presence across servers: the shared behaviour suite (packages/server/test/realtime/presence/
// suite.ts) with two apps, each with its own bus connection to a real redis-server (classic
// and sharded pub/sub) and a real nats-server.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createClient } from '@redis/client';
import { redisBus } from '@tachyon/redis';
import { natsBus } from '@tachyon/nats';
import { App, type Bus } from '../../packages/server/src/index.ts';
import {
  client,
  eventually,
  ids,
  join,
  presenceSuite,
  setupPresenceApp,
  type PresenceNode,
} from '../../packages/server/test/realtime/presence/suite.ts';
import { NatsBroker, RedisBroker, type Broker } from '../buses/brokers.ts';

const brokers: Record<string, Broker> = {};
before(async () => {
  [brokers.redis, brokers.sharded, brokers.nats] = await Promise.all([
    RedisBroker.start(),
    RedisBroker.start({ cluster: true }),
    NatsBroker.start(),
  ]);
});
after(async () => {
  await Promise.all(Object.values(brokers).map((b) => b.stop()));
});

async function startNode(bus: Bus): Promise<{ node: PresenceNode; close(): Promise<void> }> {
  const app = new App({ bus, presence: { heartbeat: 200 } });
  setupPresenceApp(app);
  const server = await app.listen({ port: 0, host: '127.0.0.1' });
  return { node: { app, url: `ws://127.0.0.1:${server.port}/ws` }, close: () => server.close({ timeout: 2000 }) };
}

function twoNodes(makeBus: () => Bus) {
  return async () => {
    const [a, b] = await Promise.all([startNode(makeBus()), startNode(makeBus())]);
    return { nodes: [a.node, b.node] as [PresenceNode, PresenceNode], close: async () => void (await Promise.all([a.close(), b.close()])) };
  };
}

presenceSuite(
  'redis (two servers)',
  twoNodes(() => redisBus({ url: brokers.redis!.url }) as unknown as Bus),
);
presenceSuite(
  'redis sharded pub/sub (two servers)',
  twoNodes(() => redisBus({ url: brokers.sharded!.url, sharded: true }) as unknown as Bus),
);
presenceSuite(
  'nats (two servers)',
  twoNodes(() => natsBus({ servers: brokers.nats!.url }) as unknown as Bus),
);

test('bad announcements on the bus are refused and counted; the server keeps serving and its members stay right', async () => {
  const { node, close } = await startNode(redisBus({ url: brokers.redis!.url }) as unknown as Bus);
  const ann = await client(node, 'ann');
  const publisher = createClient({ url: brokers.redis!.url });
  await publisher.connect();
  try {
    await join(ann, 'room:bad');
    // A bus frame (docs/protocol.md, "Bus frames"): magic, version, kind 0 (text), an origin, the payload.
    const frame = (text: string) => Buffer.concat([Buffer.from([0x54, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8]), Buffer.from(text)]);
    const bad = [
      'not json',
      '[]',
      '{"v":2,"o":"x","k":"h","ttl":1000}',
      '{"v":1,"k":"h","ttl":1000}',
      '{"v":1,"o":"x","k":"j","ttl":-5,"t":"room:bad","i":"a"}',
      '{"v":1,"o":"x","k":"j","ttl":1e12,"t":"room:bad","i":"a"}',
      '{"v":1,"o":"x","k":"j","ttl":1000,"t":"room:\\"bad","i":"a"}',
      '{"v":1,"o":"x","k":"j","ttl":1000,"t":"room:bad","i":""}',
      '{"v":1,"o":"x","k":"j","ttl":1000,"t":"room:bad","i":42}',
      '{"v":1,"o":"x","k":"s","ttl":1000,"m":{"room:bad":[]}}',
      '{"v":1,"o":"x","k":"s","ttl":1000,"m":[["room:bad",[[null]]]]}',
      '{"v":1,"o":"x","k":"?","ttl":1000}',
    ];
    for (const text of bad) await publisher.publish('tachyon:__presence', frame(text));
    // A well-formed announcement from an unknown server is taken (the bus is trusted, docs/presence.md),
    // and expires with its ttl like a crashed server's members.
    await publisher.publish('tachyon:__presence', frame('{"v":1,"o":"forger","k":"j","ttl":300,"t":"room:bad","i":"ghost"}'));
    await eventually(
      () => node.app.presence('room:bad'),
      (m) => ids(m).join() === 'ann,ghost',
      3000,
      'announced member listed',
    );
    const stats = (node.app as unknown as { hub: { presence: { stats(): { rejected: number } } } }).hub.presence.stats();
    assert.equal(stats.rejected, bad.length, 'every bad announcement refused');
    await eventually(
      () => node.app.presence('room:bad'),
      (m) => ids(m).join() === 'ann',
      3000,
      'the silent announcer expired',
    );
    assert.ok((await ann.ping()) >= 0);
  } finally {
    publisher.destroy();
    ann.close();
    await close();
  }
});

test('a large snapshot goes in parts under the bus message limit: a server that starts later learns every member', async () => {
  const TOPICS = 6000;
  const start = async (maxMessageSize: number) => {
    const app = new App({
      bus: redisBus({ url: brokers.redis!.url, prefix: 'big:', maxMessageSize }) as unknown as Bus,
      presence: { heartbeat: 200 },
    });
    app.topic('big:*', { presence: { data: () => ({ n: 'x'.repeat(20) }) } });
    app.ws('/ws', {
      upgrade: (req) => ({ id: req.query.user }),
      open(ws) {
        for (let i = 0; i < TOPICS; i++) ws.subscribe(`big:${i}`); // server side: no per-frame limit
      },
    });
    const server = await app.listen({ port: 0, host: '127.0.0.1' });
    return { node: { app, url: `ws://127.0.0.1:${server.port}/ws` }, close: () => server.close({ timeout: 2000 }) };
  };
  // About 6000 × 40 characters: some 240 KB of members, over this bus's 100 KB message limit.
  const a = await start(100_000);
  const zoe = await client(a.node, 'zoe');
  let b: Awaited<ReturnType<typeof start>> | undefined;
  try {
    await eventually(
      () => a.node.app.presence(`big:${TOPICS - 1}`),
      (m) => m.length === 1,
      5000,
      'zoe on every topic of a',
    );
    b = await start(100_000); // after zoe joined: b can only learn her from a's snapshots
    const other = b.node.app;
    // a's join announcements for the first topics went out before b existed: b knows them from a snapshot.
    await eventually(
      () => other.presence('big:0'),
      (m) => ids(m).join() === 'zoe',
      5000,
      'the first topic, from a snapshot',
    );
    for (const i of [1, 2999, 4321, TOPICS - 1])
      assert.deepEqual(await other.presence(`big:${i}`), [{ id: 'zoe', data: { n: 'x'.repeat(20) } }]);
    const rejected = (other as unknown as { hub: { presence: { stats(): { rejected: number } } } }).hub.presence.stats().rejected;
    assert.equal(rejected, 0);
  } finally {
    zoe.close();
    await Promise.all([a.close(), b?.close()]);
  }
});
