// NATS core pub/sub: the common bus suite against a real nats-server.
import { connect } from '@nats-io/transport-node';
import { topicToken } from '../../packages/nats/src/options.ts';
import { NatsBroker } from './brokers.ts';
import { busSuite } from './suite.ts';

busSuite({
  name: 'nats',
  startBroker: () => NatsBroker.start(),
  unstartedBroker: () => NatsBroker.unstarted(),
  config: (broker, extra = {}) => ({ kind: 'nats', options: { servers: (broker as NatsBroker).url, ...extra } }),
  async inject(broker, topic, bytes, prefix = 'tachyon') {
    const nc = await connect({ servers: (broker as NatsBroker).url });
    nc.publish(topic === null ? `${prefix}.presence` : `${prefix}.t.${topicToken(topic)}`, bytes);
    await nc.flush();
    await nc.close();
  },
});
