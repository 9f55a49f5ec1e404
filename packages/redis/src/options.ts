// redisBus() options: checked once, before anything connects, with messages that name the option.
import type { RedisClientOptions } from '@redis/client';
import type { BrokerBusOptions } from '@tachyon/server';
import { checkSentinel, type RedisSentinelOptions } from './sentinel.ts';

export interface RedisBusOptions extends BrokerBusOptions {
  /**
   * `redis://[[user]:password@]host[:port][/db]`, or `rediss://…` for TLS. With `sharded`,
   * one or more seed nodes of the Redis Cluster. Default `redis://127.0.0.1:6379`.
   */
  url?: string | string[];
  /**
   * Sharded pub/sub (SSUBSCRIBE/SPUBLISH, Redis 7+) on a Redis Cluster: each topic's channel
   * lives on the shard owning its slot, so pub/sub traffic spreads over the cluster instead
   * of being broadcast to every node. Default false (classic PUBLISH/SUBSCRIBE).
   */
  sharded?: boolean;
  /** Channel prefix: apps sharing one Redis use different prefixes. Default `tachyon:`. */
  prefix?: string;
  /**
   * More node-redis client options (`username`, `password`, `socket: { tls, ca, … }`,
   * `database`…), merged over what `url` says. With `sharded`, they apply to every node.
   */
  client?: Omit<RedisClientOptions, 'url'>;
  /**
   * Redis Sentinel instead of `url`: the monitored primary's name and some sentinels. The bus
   * follows a failover to the promoted replica (docs/scaling.md, "Faults"). Not with `sharded`.
   */
  sentinel?: RedisSentinelOptions;
}

export interface RedisBusSettings {
  urls: string[];
  sharded: boolean;
  prefix: string;
  client: Omit<RedisClientOptions, 'url'>;
  sentinel: RedisSentinelOptions | null;
}

export const REDIS_OPTIONS = ['url', 'sharded', 'prefix', 'client', 'sentinel'] as const;

export function redisSettings(options: RedisBusOptions): RedisBusSettings {
  const sentinel = options.sentinel === undefined ? null : checkSentinel('redisBus()', options.sentinel);
  if (sentinel !== null && options.url !== undefined) throw new TypeError('redisBus(): give url or sentinel, not both');
  if (sentinel !== null && options.sharded === true)
    throw new TypeError('redisBus(): sentinel watches one primary; sharded pub/sub needs a Redis Cluster (url)');
  const url = options.url ?? 'redis://127.0.0.1:6379';
  const urls = typeof url === 'string' ? [url] : url;
  if (!Array.isArray(urls) || urls.length === 0)
    throw new TypeError('redisBus(): url must be a redis:// or rediss:// URL, or a non-empty array of them');
  for (const u of urls) {
    let parsed: URL;
    try {
      parsed = new URL(String(u));
    } catch {
      throw new TypeError(`redisBus(): url ${JSON.stringify(u)} is not a URL`);
    }
    if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')
      throw new TypeError(`redisBus(): url must start with redis:// or rediss:// (got ${parsed.protocol}//)`);
  }
  const sharded = options.sharded ?? false;
  if (typeof sharded !== 'boolean') throw new TypeError('redisBus(): sharded must be a boolean');
  if (!sharded && urls.length > 1) throw new TypeError('redisBus(): several urls are cluster seed nodes: they need sharded: true');
  const prefix = options.prefix ?? 'tachyon:';
  // Printable ASCII without '"' (the presence channel uses it: no topic can). In a cluster,
  // a '{' would make the prefix a hash tag and put every topic on one shard.
  if (typeof prefix !== 'string' || prefix.length > 128 || !/^[\x20-\x7e]*$/.test(prefix) || prefix.includes('"'))
    throw new TypeError("redisBus(): prefix must be at most 128 printable ASCII characters, without '\"'");
  if (sharded && (prefix.includes('{') || prefix.includes('}')))
    throw new TypeError('redisBus(): with sharded, the prefix must not contain { or } (a hash tag would put every topic on one shard)');
  const client = options.client ?? {};
  if (typeof client !== 'object' || client === null) throw new TypeError('redisBus(): client must be an object of node-redis options');
  return { urls: urls.map(String), sharded, prefix, client, sentinel };
}
