// A RateLimitStore in Redis (docs/rate-limit.md, "Stores"): several servers enforce one limit.
// One round trip per hit: a Lua script increments the key, starts its window on the first hit
// (PEXPIRE) and returns the count with the time left, atomically, so the fixed-window
// semantics are the memory store's. A hit never waits long for a Redis that does not answer:
// it fails at once while Redis is unreachable (no offline queue), or while the store knows
// its primary is away (a sentinel client's lost primary, or a hit that timed out), and after
// `timeout` ms otherwise; rateLimit() then lets the request through (or refuses it, by its
// option) and logs. One PING at a time tells when Redis answers again.
import { createClient, type RedisClientOptions } from '@redis/client';
import { checkKnownKeys, type RateLimitHit, type RateLimitStore } from '@tachyon/server';
import { checkSentinel, connectSentinel, PrimaryWatch, sentinelClient, type RedisSentinelOptions } from './sentinel.ts';
import { backoff } from './transport.ts';

export interface RedisRateLimitStoreOptions {
  /** `redis://[[user]:password@]host[:port][/db]` or `rediss://…`. Default `redis://127.0.0.1:6379`. */
  url?: string;
  /**
   * Redis Sentinel instead of `url`: the monitored primary's name and some sentinels. The store
   * follows a failover to the promoted replica; the counts it replicated carry over (docs/rate-limit.md, "Stores").
   */
  sentinel?: RedisSentinelOptions;
  /** Key prefix: limiters (or apps) sharing one Redis use different prefixes. Default `tachyon:rl:`. */
  prefix?: string;
  /** More node-redis client options (`username`, `password`, `socket: { tls, … }`), merged over `url`. */
  client?: Omit<RedisClientOptions, 'url'>;
  /**
   * Milliseconds a hit waits for Redis's answer before it fails (a frozen or overloaded Redis).
   * After one such failure hits fail at once until Redis answers a PING. Default 1000.
   */
  timeout?: number;
}

// KEYS[1] the counter; ARGV[1] the window in ms. A key without a TTL (the first hit, or one
// left by something else) gets the window, so a counter can never live forever.
const HIT = `local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) ttl = tonumber(ARGV[1]) end
return {n, ttl}`;

const AWAY = new Error('redis rate-limit store: Redis does not answer (waiting for it to answer a PING)');

/** The store's connection: a client on `url`, or a sentinel client following the primary. */
interface Connection {
  send(args: string[]): Promise<unknown>;
  /** Known to be away: a hit fails without being sent. */
  readonly away: boolean;
  connect(): Promise<void>;
  close(): Promise<void>;
}

export class RedisRateLimitStore implements RateLimitStore {
  private readonly conn: Connection;
  private readonly prefix: string;
  private readonly timeout: number;
  private connecting: Promise<void> | null = null;
  private closed = false;
  /** A hit timed out: hits fail at once until the PING sent then is answered. */
  private unanswered = false;
  /** The client's last connection error (node-redis reconnects by itself; rateLimit() logs failed hits). */
  lastError: Error | null = null;

  constructor(options: RedisRateLimitStoreOptions = {}) {
    if (typeof options !== 'object' || options === null) throw new TypeError('redisRateLimitStore(): options must be an object');
    checkKnownKeys('redisRateLimitStore()', options, ['url', 'sentinel', 'prefix', 'client', 'timeout']);
    const url = options.url ?? 'redis://127.0.0.1:6379';
    if (typeof url !== 'string' || !/^rediss?:\/\//.test(url) || !URL.canParse(url))
      throw new TypeError('redisRateLimitStore(): url must be a redis:// or rediss:// URL');
    const sentinel = options.sentinel === undefined ? null : checkSentinel('redisRateLimitStore()', options.sentinel);
    if (sentinel !== null && options.url !== undefined) throw new TypeError('redisRateLimitStore(): give url or sentinel, not both');
    const prefix = options.prefix ?? 'tachyon:rl:';
    if (typeof prefix !== 'string' || prefix.length > 128)
      throw new TypeError('redisRateLimitStore(): prefix must be a string of at most 128 characters');
    const client = options.client ?? {};
    if (typeof client !== 'object' || client === null)
      throw new TypeError('redisRateLimitStore(): client must be an object of node-redis options');
    const timeout = options.timeout ?? 1000;
    if (!Number.isSafeInteger(timeout) || timeout < 1)
      throw new TypeError('redisRateLimitStore(): timeout must be a positive integer (milliseconds)');
    this.prefix = prefix;
    this.timeout = timeout;
    // Without a listener an 'error' event would be thrown: a Redis outage must not end the process.
    const onError = (err: unknown) => void (this.lastError = err instanceof Error ? err : new Error(String(err)));
    this.conn = sentinel === null ? plainConnection(url, client, onError) : sentinelConnection(sentinel, client, onError);
  }

  /**
   * Connects. Optional: the first hit connects otherwise, in the background, and hits fail
   * (rateLimit() lets them through and logs, by default) until Redis answers. Await it at
   * startup to begin counting from the first request; it resolves once connected (node-redis
   * keeps retrying while Redis is down).
   */
  connect(): Promise<void> {
    if (this.connecting === null && !this.closed) this.connecting = this.conn.connect();
    return this.connecting ?? Promise.resolve();
  }

  async increment(key: string, windowMs: number): Promise<RateLimitHit> {
    const reply = (await this.send(['EVAL', HIT, '1', this.prefix + key, String(windowMs)])) as [number, number];
    return { count: Number(reply[0]), resetAt: Date.now() + Number(reply[1]) };
  }

  async reset(key: string): Promise<void> {
    await this.send(['DEL', this.prefix + key]);
  }

  /** Redis is known not to answer now: hits fail at once. */
  get away(): boolean {
    return this.unanswered || this.conn.away;
  }

  /** Sends a command, or fails at once while Redis is away, or after `timeout` ms without an answer. */
  private send(args: string[]): Promise<unknown> {
    if (this.connecting === null) void this.connect();
    if (this.away) return Promise.reject(AWAY);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`redis rate-limit store: no answer from Redis within ${this.timeout} ms`));
        this.noAnswer();
      }, this.timeout);
      // A late answer still counts the hit in Redis (the request went through meanwhile).
      this.conn.send(args).then(
        (v) => (clearTimeout(timer), resolve(v)),
        (err: unknown) => (clearTimeout(timer), reject(err)),
      );
    });
  }

  /** A hit timed out: no more waiting until a PING (waiting as long as it takes) is answered. */
  private noAnswer(): void {
    if (this.unanswered || this.closed) return;
    this.unanswered = true;
    this.lastError = new Error(`redis rate-limit store: no answer from Redis within ${this.timeout} ms`);
    const ping = (attempt: number): void =>
      void this.conn.send(['PING']).then(
        () => void (this.unanswered = false),
        () => {
          if (!this.closed) setTimeout(() => ping(attempt + 1), backoff(attempt)).unref();
        },
      );
    ping(0);
  }

  /** Disconnects (call it from app.onClose). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.connecting === null) return;
    // Never waits for a Redis that is away: the connection is dropped, not closed cleanly.
    await this.conn.close();
  }
}

function plainConnection(url: string, options: Omit<RedisClientOptions, 'url'>, onError: (err: unknown) => void): Connection {
  // No offline queue: while Redis is unreachable a hit fails at once instead of waiting.
  const c = createClient({ ...options, url, disableOfflineQueue: true });
  c.on('error', onError);
  return {
    send: (args) => c.sendCommand(args),
    away: false,
    // connect() keeps retrying (node-redis's reconnect strategy) and settles when ready or closed.
    connect: () =>
      c.connect().then(
        () => {},
        (err: unknown) => onError(err),
      ),
    close: async () => void (c.isOpen ? c.destroy() : undefined),
  };
}

function sentinelConnection(
  sentinel: RedisSentinelOptions,
  options: Omit<RedisClientOptions, 'url'>,
  onError: (err: unknown) => void,
): Connection {
  const s = sentinelClient(sentinel, { ...options, socket: { ...options.socket, reconnectStrategy: backoff } as never });
  s.on('error', onError);
  // Hits made while the primary is away would wait in node-redis's rediscovery loop for it
  // (or for a promoted replica): they fail at once instead, as with a plain client.
  let answered = () => {};
  const primary = new PrimaryWatch(s, backoff, onError, () => primary.up && answered());
  let connecting: { stop(): void } | null = null;
  return {
    send: (args) => s.sendCommand(undefined, args),
    get away() {
      return !primary.up;
    },
    // Resolves once the primary answers (the sentinels found it and a PING came back).
    connect: () =>
      new Promise<void>((resolve) => {
        answered = resolve;
        connecting = connectSentinel(s, backoff, onError, () => primary.probe(0));
      }),
    close: async () => {
      connecting?.stop();
      primary.stop();
      answered();
      await s.destroy();
    },
  };
}

/** A rate-limit store in Redis, shared by every server: `rateLimit({ store: redisRateLimitStore({ url }) })`. */
export function redisRateLimitStore(options: RedisRateLimitStoreOptions = {}): RedisRateLimitStore {
  return new RedisRateLimitStore(options);
}
