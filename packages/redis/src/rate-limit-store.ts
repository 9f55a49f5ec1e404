// A RateLimitStore in Redis (docs/rate-limit.md, "Stores"): several servers enforce one limit.
// One round trip per hit: a Lua script increments the key, starts its window on the first hit
// (PEXPIRE) and returns the count with the time left, atomically, so the fixed-window
// semantics are the memory store's. Commands are not queued while Redis is unreachable: they
// fail at once, and rateLimit() fails open (or closed, by its option) and logs.
import { createClient, type RedisClientOptions } from '@redis/client';
import { checkKnownKeys, type RateLimitHit, type RateLimitStore } from '@tachyon/server';

export interface RedisRateLimitStoreOptions {
  /** `redis://[[user]:password@]host[:port][/db]` or `rediss://…`. Default `redis://127.0.0.1:6379`. */
  url?: string;
  /** Key prefix: limiters (or apps) sharing one Redis use different prefixes. Default `tachyon:rl:`. */
  prefix?: string;
  /** More node-redis client options (`username`, `password`, `socket: { tls, … }`), merged over `url`. */
  client?: Omit<RedisClientOptions, 'url'>;
}

// KEYS[1] the counter; ARGV[1] the window in ms. A key without a TTL (the first hit, or one
// left by something else) gets the window, so a counter can never live forever.
const HIT = `local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) ttl = tonumber(ARGV[1]) end
return {n, ttl}`;

type Client = ReturnType<typeof createClient>;

export class RedisRateLimitStore implements RateLimitStore {
  private readonly client: Client;
  private readonly prefix: string;
  private connecting: Promise<unknown> | null = null;
  private closed = false;
  /** The client's last connection error (node-redis reconnects by itself; rateLimit() logs failed hits). */
  lastError: Error | null = null;

  constructor(options: RedisRateLimitStoreOptions = {}) {
    if (typeof options !== 'object' || options === null) throw new TypeError('redisRateLimitStore(): options must be an object');
    checkKnownKeys('redisRateLimitStore()', options, ['url', 'prefix', 'client']);
    const url = options.url ?? 'redis://127.0.0.1:6379';
    if (typeof url !== 'string' || !/^rediss?:\/\//.test(url) || !URL.canParse(url))
      throw new TypeError('redisRateLimitStore(): url must be a redis:// or rediss:// URL');
    const prefix = options.prefix ?? 'tachyon:rl:';
    if (typeof prefix !== 'string' || prefix.length > 128)
      throw new TypeError('redisRateLimitStore(): prefix must be a string of at most 128 characters');
    const client = options.client ?? {};
    if (typeof client !== 'object' || client === null)
      throw new TypeError('redisRateLimitStore(): client must be an object of node-redis options');
    this.prefix = prefix;
    this.client = createClient({ ...client, url, disableOfflineQueue: true });
    // Without a listener an 'error' event would be thrown: a Redis outage must not end the process.
    this.client.on('error', (err: Error) => void (this.lastError = err));
  }

  /**
   * Connects. Optional: the first hit connects otherwise, in the background, and hits fail
   * (rateLimit() lets them through and logs, by default) until Redis answers. Await it at
   * startup to begin counting from the first request; it resolves once connected (node-redis
   * keeps retrying while Redis is down).
   */
  connect(): Promise<void> {
    if (this.connecting === null && !this.closed) {
      this.connecting = this.client.connect().catch((err: Error) => {
        this.lastError = err;
      });
    }
    return (this.connecting ?? Promise.resolve()).then(() => {});
  }

  async increment(key: string, windowMs: number): Promise<RateLimitHit> {
    if (this.connecting === null) void this.connect();
    const reply = (await this.client.sendCommand(['EVAL', HIT, '1', this.prefix + key, String(windowMs)])) as [number, number];
    return { count: Number(reply[0]), resetAt: Date.now() + Number(reply[1]) };
  }

  async reset(key: string): Promise<void> {
    if (this.connecting === null) void this.connect();
    await this.client.sendCommand(['DEL', this.prefix + key]);
  }

  /** Disconnects (call it from app.onClose). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.connecting === null) return;
    await this.connecting;
    if (this.client.isOpen) this.client.destroy();
  }
}

/** A rate-limit store in Redis, shared by every server: `rateLimit({ store: redisRateLimitStore({ url }) })`. */
export function redisRateLimitStore(options: RedisRateLimitStoreOptions = {}): RedisRateLimitStore {
  return new RedisRateLimitStore(options);
}
