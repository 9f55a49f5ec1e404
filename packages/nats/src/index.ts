// @tachyon/nats: Tachyon servers behind a load balancer act as one through NATS.
//   new App({ bus: natsBus({ servers: 'nats://127.0.0.1:4222' }) })
import { BrokerBus, checkKnownKeys, type BrokerBusOptions } from '@tachyon/server';
import { NATS_OPTIONS, natsSettings, type NatsBusOptions } from './options.ts';
import { NatsTransport } from './transport.ts';

export type { NatsBusOptions } from './options.ts';
export type { BrokerBus, BrokerBusStats } from '@tachyon/server';

const BUS_OPTIONS = ['maxMessageSize', 'maxInFlight', 'maxQueue', 'maxQueueBytes', 'presenceInterval', 'stallTimeout', 'logger'] as const;

/** A bus over NATS core pub/sub (docs/scaling.md). Connects when the app starts, in the background. */
export function natsBus(options: NatsBusOptions = {}): BrokerBus {
  if (typeof options !== 'object' || options === null) throw new TypeError('natsBus(): options must be an object');
  checkKnownKeys('natsBus()', options, [...NATS_OPTIONS, ...BUS_OPTIONS]);
  const settings = natsSettings(options);
  const busOptions: BrokerBusOptions = {};
  for (const k of BUS_OPTIONS) if (options[k] !== undefined) (busOptions as Record<string, unknown>)[k] = options[k];
  return new BrokerBus(new NatsTransport(settings), busOptions);
}
