// Presence across servers: the shared behaviour suite (packages/server/test/realtime/presence/
// suite.ts) with two apps, each with its own bus connection to a real redis-server (classic
// and sharded pub/sub) and a real nats-server.
import { after, before } from 'node:test';
import { redisBus } from '@tachyon/redis';
import { natsBus } from '@tachyon/nats';
import { App, type Bus } from '../../packages/server/src/index.ts';
import { presenceSuite, setupPresenceApp, type PresenceNode } from '../../packages/server/test/realtime/presence/suite.ts';
import { NatsBroker, RedisBroker, type Broker } from '../buses/brokers.ts';

const brokers: Record<string, Broker> = {};
before(async () => {
  [brokers.redis, brokers.sharded, brokers.nats] = await Promise.all([RedisBroker.start(), RedisBroker.start({ cluster: true }), NatsBroker.start()]);
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

presenceSuite('redis (two servers)', twoNodes(() => redisBus({ url: brokers.redis!.url }) as unknown as Bus));
presenceSuite('redis sharded pub/sub (two servers)', twoNodes(() => redisBus({ url: brokers.sharded!.url, sharded: true }) as unknown as Bus));
presenceSuite('nats (two servers)', twoNodes(() => natsBus({ servers: brokers.nats!.url }) as unknown as Bus));
