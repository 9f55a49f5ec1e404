// Credentials through the URL, against brokers that require them: the right ones connect
// and carry messages, wrong ones leave the bus not ready with a logged reason (and retrying).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { redisBus } from '@tachyon/redis';
import { natsBus } from '@tachyon/nats';
import type { BrokerBus } from '@tachyon/server';
import { NatsBroker, RedisBroker, type Broker } from './brokers.ts';
import { waitFor, sleep } from './node.ts';

const brokers: Broker[] = [];
after(() => Promise.all(brokers.map((b) => b.dispose())));

function recording() {
  const lines: string[] = [];
  const log = (o: unknown, m?: string) => void lines.push(`${m ?? ''} ${(o as { err?: Error })?.err?.message ?? ''}`);
  return { lines, logger: { error: log, warn: log, info: log, debug: () => {} } };
}

/** Two buses on one broker: a message from one reaches the other. */
async function carries(make: () => BrokerBus): Promise<void> {
  const got: string[] = [];
  const [a, b] = [make(), make()];
  const { logger } = recording();
  a.start(() => {}, { logger, localSubscribers: () => 1 });
  b.start((topic, message) => got.push(`${topic} ${Buffer.from(message as Uint8Array).toString()}`), { logger, localSubscribers: () => 1 });
  try {
    await waitFor(() => a.ready() && b.ready(), 'both connected');
    b.interest('t', true);
    await sleep(100);
    a.publish('t', 'hello', false);
    await waitFor(() => got.length === 1, 'the message');
    assert.deepEqual(got, ['t hello']);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}

async function refused(bus: BrokerBus, pattern: RegExp): Promise<void> {
  const { lines, logger } = recording();
  bus.start(() => {}, { logger, localSubscribers: () => 0 });
  try {
    await waitFor(() => lines.some((l) => pattern.test(l)), `a log line matching ${pattern}`, 5000);
    assert.equal(bus.ready(), false);
  } finally {
    await bus.close();
  }
}

test('redis: password in the URL (requirepass)', async () => {
  const broker = await RedisBroker.start({ password: 'p@ss word' });
  brokers.push(broker);
  const secret = encodeURIComponent('p@ss word');
  await carries(() => redisBus({ url: `redis://default:${secret}@127.0.0.1:${broker.port}`, presenceInterval: false }));
  await refused(
    redisBus({ url: `redis://default:wrong@127.0.0.1:${broker.port}`, presenceInterval: false }),
    /WRONGPASS|invalid username-password|NOAUTH/i,
  );
});

test('nats: user and password in the URL', async () => {
  const broker = await NatsBroker.start({ auth: { user: 'app', pass: 's3cret' } });
  brokers.push(broker);
  await carries(() => natsBus({ servers: `nats://app:s3cret@127.0.0.1:${broker.port}`, presenceInterval: false }));
  await carries(() =>
    natsBus({ servers: `nats://127.0.0.1:${broker.port}`, connection: { user: 'app', pass: 's3cret' }, presenceInterval: false }),
  );
  await refused(natsBus({ servers: `nats://app:wrong@127.0.0.1:${broker.port}`, presenceInterval: false }), /Authorization Violation/i);
});
