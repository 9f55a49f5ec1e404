// @tachyon/redis: Tachyon servers behind a load balancer act as one through Redis pub/sub.
//   new App({ bus: redisBus({ url: process.env.REDIS_URL, sharded: true }) })
import { BrokerBus, checkKnownKeys, type BrokerBusOptions } from '@tachyon/server';
import { REDIS_OPTIONS, redisSettings, type RedisBusOptions } from './options.ts';
import { RedisTransport } from './transport.ts';

export type { RedisBusOptions } from './options.ts';
export type { RedisSentinelOptions } from './sentinel.ts';
export type { BrokerBus, BrokerBusStats } from '@tachyon/server';

const BUS_OPTIONS = ['maxMessageSize', 'maxInFlight', 'maxQueue', 'maxQueueBytes', 'presenceInterval', 'stallTimeout', 'logger'] as const;

/** A bus over Redis pub/sub (docs/scaling.md). Connects when the app starts, in the background. */
export function redisBus(options: RedisBusOptions = {}): BrokerBus {
  if (typeof options !== 'object' || options === null) throw new TypeError('redisBus(): options must be an object');
  checkKnownKeys('redisBus()', options, [...REDIS_OPTIONS, ...BUS_OPTIONS]);
  const settings = redisSettings(options);
  const busOptions: BrokerBusOptions = {};
  for (const k of BUS_OPTIONS) if (options[k] !== undefined) (busOptions as Record<string, unknown>)[k] = options[k];
  return new BrokerBus(new RedisTransport(settings), busOptions);
}
export { redisRateLimitStore, RedisRateLimitStore, type RedisRateLimitStoreOptions } from './rate-limit-store.ts';
export { redisHistory, RedisHistoryStore, type RedisHistoryOptions, type RedisHistoryStats } from './history.ts';
export { redisIdempotency, RedisIdempotencyStore, type RedisIdempotencyOptions } from './idempotency.ts';
