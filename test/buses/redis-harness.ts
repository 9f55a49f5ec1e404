// The Redis side of the bus suite: a real redis-server, plain or as a one-node Redis Cluster.
import { createClient } from '@redis/client';
import { RedisBroker } from './brokers.ts';
import type { Harness } from './suite.ts';

export function redisHarness(sharded: boolean): Harness {
  return {
    name: sharded ? 'redis (sharded pub/sub, cluster)' : 'redis',
    startBroker: () => RedisBroker.start({ cluster: sharded }),
    unstartedBroker: () => RedisBroker.unstarted({ cluster: sharded }),
    config: (broker, extra = {}) => ({ kind: 'redis', options: { url: (broker as RedisBroker).url, sharded, ...extra } }),
    async inject(broker, topic, bytes, prefix = 'tachyon:') {
      const client = createClient({ url: (broker as RedisBroker).url });
      await client.connect();
      try {
        const channel = topic === null ? `${prefix}"presence"` : prefix + topic;
        await client.sendCommand([sharded ? 'SPUBLISH' : 'PUBLISH', channel, bytes]);
      } finally {
        client.destroy();
      }
    },
    async listen(broker, topic) {
      const client = createClient({ url: (broker as RedisBroker).url });
      await client.connect();
      const frames: Buffer[] = [];
      const channel = topic === null ? 'tachyon:"presence"' : `tachyon:${topic}`;
      const record = (m: Buffer | string) => void frames.push(Buffer.from(m));
      if (sharded) await client.sSubscribe(channel, record, true);
      else await client.subscribe(channel, record, true);
      return { frames, stop: async () => client.destroy() };
    },
  };
}
