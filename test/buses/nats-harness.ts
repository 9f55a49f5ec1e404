// The NATS side of the bus suite: a real nats-server.
import { connect } from '@nats-io/transport-node';
import { topicToken } from '../../packages/nats/src/options.ts';
import { NatsBroker } from './brokers.ts';
import type { Harness } from './suite.ts';

const subject = (topic: string | null, prefix = 'tachyon') => (topic === null ? `${prefix}.presence` : `${prefix}.t.${topicToken(topic)}`);

export const natsHarness: Harness = {
  name: 'nats',
  startBroker: () => NatsBroker.start(),
  unstartedBroker: () => NatsBroker.unstarted(),
  config: (broker, extra = {}) => ({ kind: 'nats', options: { servers: (broker as NatsBroker).url, ...extra } }),
  async inject(broker, topic, bytes, prefix) {
    const nc = await connect({ servers: (broker as NatsBroker).url });
    nc.publish(subject(topic, prefix), bytes);
    await nc.flush();
    await nc.close();
  },
  async listen(broker, topic) {
    const nc = await connect({ servers: (broker as NatsBroker).url });
    const frames: Buffer[] = [];
    nc.subscribe(subject(topic), { callback: (_err, m) => void frames.push(Buffer.from(m.data)) });
    await nc.flush();
    return { frames, stop: () => nc.close() };
  },
};
