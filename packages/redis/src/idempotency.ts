// redisIdempotency(): the idempotency keys of retried requests shared by every server through
// Redis (docs/realtime.md, "Retried requests, run once"), so that a resend that reconnects to
// another server gets the first outcome instead of running the handler again. One Redis key
// per idempotency key, holding either "running" (with this claim's token) or the outcome:
// - claim: one Lua script, GET or SET ... PX lease. The first server sets "running" and runs
//   the handler; it renews the lease while the handler runs, so a server that dies mid-handler
//   frees the key after `lease` ms (the next resend waiting for it runs it: the outcome was
//   never sent).
// - settle: the outcome replaces "running" (if the key is still ours), kept for what is left
//   of the window.
// - a resend that finds "running" polls (20 ms, doubling up to 500 ms) until the outcome is
//   there, or the key is free again (it claims it), or the window ends. Polling, not pub/sub:
//   such a wait needs a connection cut while a handler runs, so it is rare; polling needs no
//   second connection in subscriber mode, has no window between GET and SUBSCRIBE where a
//   notification is lost, and survives a Redis restart. It costs up to the poll interval of
//   extra latency on that rare resend, and one GET per interval while it waits (bounded by
//   `maxWaiting`).
// Redis down, frozen or too slow (`timeout`): the claim fails and the route does what
// `whenDown` says: run here (logged; resends on this server still run once) or refuse.
import { createClient, type RedisClientOptions } from '@redis/client';
import { checkKnownKeys, silentLogger, type KeyLimits, type KeyOutcome, type Logger, type SharedKeys } from '@tachyon/server';
import { checkSentinel, connectSentinel, sentinelClient, type RedisSentinelOptions } from './sentinel.ts';

export interface RedisIdempotencyOptions {
  /** `redis://…` or `rediss://…`. Default `redis://127.0.0.1:6379`. */
  url?: string;
  /** Redis Sentinel instead of `url`: the keys follow a failover to the promoted replica. */
  sentinel?: RedisSentinelOptions;
  /** Key prefix: apps sharing one Redis use different prefixes. Default `tachyon:once:`. */
  prefix?: string;
  /** More node-redis client options (`username`, `password`, `socket: { tls, … }`…). */
  client?: Omit<RedisClientOptions, 'url'>;
  /** Redis unreachable or too slow: `'run'` the handler here and log (default), or `'refuse'` it (`UNAVAILABLE`, nothing runs). */
  whenDown?: 'run' | 'refuse';
  /** Milliseconds a claim waits for Redis before Redis counts as down (default 2000). */
  timeout?: number;
  /** Milliseconds a server that stopped renewing (it died) keeps a running key; renewed every third of it (default 5000). */
  lease?: number;
  /** Resends waiting at once for keys another server runs; past it they count as Redis down (default 1000). */
  maxWaiting?: number;
}

// KEYS[1] the key; ARGV[1] "r<token>"; ARGV[2] the lease. Nil: claimed; else what the key holds.
const CLAIM = `local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`;
// ARGV[1] "r<token>"; ARGV[2] "d<ref>:<frame>"; ARGV[3] ms left in the window.
const SETTLE = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if tonumber(ARGV[3]) > 0 then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) else redis.call('DEL', KEYS[1]) end
return 1`;
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;

const FIRST_POLL = 20;
const MAX_POLL = 500;
/**
 * Commands sent and not answered. A frozen Redis keeps its connection open and answers
 * nothing: node-redis holds each command until it does (the timeout only stops our wait), so
 * past this many a claim fails at once instead of growing memory with the rate of keyed frames.
 */
const MAX_PENDING = 10_000;

/** A key this server runs: its "running" value and when it was claimed. */
interface Running {
  value: string;
  at: number;
  window: number;
}

export class RedisIdempotencyStore implements SharedKeys {
  readonly whenDown: 'run' | 'refuse';
  private readonly conn: Connection;
  private readonly prefix: string;
  private readonly timeout: number;
  private readonly lease: number;
  private readonly maxWaiting: number;
  /** Names this store's claims: a settle or renewal touches a key only while it still holds our token. */
  private readonly instance = globalThis.crypto.randomUUID();
  private next = 0;
  private readonly running = new Map<string, Running>();
  private renewTimer: NodeJS.Timeout | null = null;
  private waiting = 0;
  private pending = 0;
  private closed = false;
  private failures = 0;
  private logger: Logger = silentLogger;

  constructor(options: RedisIdempotencyOptions = {}) {
    const fail = (msg: string): never => {
      throw new TypeError(`redisIdempotency(): ${msg}`);
    };
    if (typeof options !== 'object' || options === null) fail('options must be an object');
    checkKnownKeys('redisIdempotency()', options, ['url', 'sentinel', 'prefix', 'client', 'whenDown', 'timeout', 'lease', 'maxWaiting']);
    const url = options.url ?? 'redis://127.0.0.1:6379';
    if (typeof url !== 'string' || !/^rediss?:\/\//.test(url) || !URL.canParse(url)) fail('url must be a redis:// or rediss:// URL');
    const sentinel = options.sentinel === undefined ? null : checkSentinel('redisIdempotency()', options.sentinel);
    if (sentinel !== null && options.url !== undefined) fail('give url or sentinel, not both');
    const prefix = options.prefix ?? 'tachyon:once:';
    if (typeof prefix !== 'string' || prefix.length > 128) fail('prefix must be a string of at most 128 characters');
    const whenDown = options.whenDown ?? 'run';
    if (whenDown !== 'run' && whenDown !== 'refuse') fail("whenDown must be 'run' or 'refuse'");
    const ms = (name: 'timeout' | 'lease' | 'maxWaiting', fallback: number, min: number): number => {
      const v = options[name] ?? fallback;
      if (!Number.isSafeInteger(v) || v < min || v > 86_400_000) fail(`${name} must be an integer from ${min} to 86400000`);
      return v;
    };
    this.timeout = ms('timeout', 2000, 1);
    this.lease = ms('lease', 5000, 30);
    this.maxWaiting = ms('maxWaiting', 1000, 1);
    this.prefix = prefix;
    this.whenDown = whenDown;
    const client = options.client ?? {};
    if (typeof client !== 'object' || client === null) fail('client must be an object of node-redis options');
    this.conn = sentinel === null ? plainConnection(url, client) : sentinelConnection(sentinel, client);
  }

  /** The app's logger (handed over when a route with this store is compiled). */
  useLogger(logger: Logger): void {
    this.logger = logger;
  }

  /** Connects. Optional: the first claim connects otherwise (waiting up to `timeout` for it). Resolves once connected. */
  connect(): Promise<void> {
    return this.conn.open();
  }

  /** Keys this server runs now, resends waiting for another server's outcome, commands Redis has not answered (tests, metrics). */
  stats(): { connected: boolean; running: number; waiting: number; pending: number } {
    return { connected: this.conn.ready, running: this.running.size, waiting: this.waiting, pending: this.pending };
  }

  async claim(scope: string, key: string, limits: KeyLimits): Promise<KeyOutcome | null> {
    // The client's key has no '"' (realtime/once.ts): the first one ends it.
    const k = `${this.prefix}${key}"${scope}`;
    const mine: Running = { value: `r${this.instance}.${++this.next}`, at: Date.now(), window: limits.window };
    const found = await this.tryClaim(k, mine);
    if (found !== 'running') return found;
    if (this.waiting >= this.maxWaiting) throw new Error(`redis idempotency: ${this.waiting} resends already wait for other servers`);
    this.waiting++;
    try {
      for (let delay = FIRST_POLL; ; delay = Math.min(MAX_POLL, delay * 2)) {
        if (Date.now() - mine.at > limits.window)
          throw new Error(`redis idempotency: key still running on another server after the window`);
        await new Promise((r) => setTimeout(r, delay));
        if (this.closed) throw new Error('redis idempotency: closed');
        const now = await this.tryClaim(k, mine);
        if (now !== 'running') return now;
      }
    } finally {
      this.waiting--;
    }
  }

  /** One claim: null (ours now: run it), the outcome, or 'running' (another server runs it). */
  private async tryClaim(k: string, mine: Running): Promise<KeyOutcome | null | 'running'> {
    const v = await this.command(['EVAL', CLAIM, '1', k, mine.value, String(this.lease)]);
    if (v === null) {
      this.running.set(k, mine);
      if (this.renewTimer === null) {
        this.renewTimer = setInterval(() => this.renew(), Math.floor(this.lease / 3));
        this.renewTimer.unref();
      }
      return null;
    }
    if (typeof v === 'string' && v[0] === 'r') return 'running';
    const colon = typeof v === 'string' && v[0] === 'd' ? v.indexOf(':') : -1;
    const ref = colon > 1 ? Number((v as string).slice(1, colon)) : Number.NaN;
    if (!Number.isSafeInteger(ref)) throw new Error(`redis idempotency: key ${k} holds something else (not written by Tachyon?)`);
    return { ref, text: (v as string).slice(colon + 1) };
  }

  settle(scope: string, key: string, outcome: KeyOutcome): void {
    const k = `${this.prefix}${key}"${scope}`;
    const mine = this.running.get(k);
    if (mine === undefined) return;
    this.forget(k);
    const left = mine.window - (Date.now() - mine.at);
    this.command(['EVAL', SETTLE, '1', k, mine.value, `d${outcome.ref}:${outcome.text}`, String(left)]).catch((err: unknown) => {
      // The lease frees the key: a resend elsewhere would run it again.
      const n = ++this.failures;
      if ((n & (n - 1)) === 0)
        this.logger.warn(
          { err, failed: n },
          'redis idempotency: an outcome could not be stored: a resend to another server may run it again',
        );
    });
  }

  private forget(k: string): void {
    this.running.delete(k);
    if (this.running.size === 0 && this.renewTimer !== null) {
      clearInterval(this.renewTimer);
      this.renewTimer = null;
    }
  }

  /** Keeps the keys whose handlers still run (their lease would free them otherwise). */
  private renew(): void {
    for (const [k, mine] of this.running)
      this.command(['EVAL', RENEW, '1', k, mine.value, String(this.lease)]).catch(() => {
        // Redis away: the lease runs out and another server may take the key; logged by the claims that fail.
      });
  }

  /**
   * One command: fails at once while Redis is known to be away (node-redis would queue it
   * without bound), and after `timeout` when Redis does not answer.
   */
  private async command(args: string[]): Promise<unknown> {
    if (this.closed) throw new Error('redis idempotency: closed');
    if (!this.conn.ready && !(await this.conn.firstConnect(this.timeout))) throw new Error('redis idempotency: not connected to Redis');
    if (this.pending >= MAX_PENDING) throw new Error(`redis idempotency: ${this.pending} commands unanswered by Redis`);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`redis idempotency: no answer from Redis within ${this.timeout} ms`)), this.timeout);
    });
    this.pending++;
    const sent = this.conn.send(args).finally(() => this.pending--);
    try {
      return await Promise.race([sent, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Disconnects (call it from app.onClose); waiting resends fail. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.renewTimer !== null) clearInterval(this.renewTimer);
    this.running.clear();
    await this.conn.close().catch(() => {});
  }
}

/** The store's connection: a client on `url`, or a sentinel client following the primary. */
interface Connection {
  readonly ready: boolean;
  /** Starts connecting (once); resolves when connected. */
  open(): Promise<void>;
  /** Before the first connection only: starts it and waits up to `ms` for it; false if it is not there. */
  firstConnect(ms: number): Promise<boolean>;
  send(args: string[]): Promise<unknown>;
  close(): Promise<void>;
}

function connection(
  ready: () => boolean,
  start: () => Promise<void>,
  send: (args: string[]) => Promise<unknown>,
  close: () => Promise<void>,
): Connection {
  let opening: Promise<void> | null = null;
  let known = false; // connected once, or failed once: from then on, no waiting
  const open = () => (opening ??= start().then(() => void (known = true)));
  return {
    get ready() {
      return ready();
    },
    open,
    async firstConnect(ms) {
      if (known) return ready();
      let timer: NodeJS.Timeout | undefined;
      const ok = await Promise.race([open().then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]);
      clearTimeout(timer);
      if (!ok) known = true;
      return ok && ready();
    },
    send,
    close: () => (opening === null ? Promise.resolve() : close()),
  };
}

function plainConnection(url: string, options: Omit<RedisClientOptions, 'url'>): Connection {
  const c = createClient({ ...options, url, disableOfflineQueue: true });
  // Without a listener an 'error' event would be thrown: a Redis outage must not end the process.
  c.on('error', () => {});
  return connection(
    () => c.isReady,
    () => c.connect().then(() => {}),
    (args) => c.sendCommand(args),
    async () => c.destroy(),
  );
}

function sentinelConnection(sentinel: RedisSentinelOptions, options: Omit<RedisClientOptions, 'url'>): Connection {
  const s = sentinelClient(sentinel, options);
  s.on('error', () => {});
  let stop = () => {};
  return connection(
    () => s.isReady,
    () =>
      new Promise<void>((resolve) => {
        stop = connectSentinel(
          s,
          (n) => Math.min(100 * 2 ** Math.min(n, 6), 5000),
          () => {},
          resolve,
        ).stop;
      }),
    (args) => s.sendCommand(undefined, args),
    async () => {
      stop();
      s.destroy();
    },
  );
}

/**
 * Idempotency keys in Redis, shared by every server: `app.ws('/live', { idempotency: { store:
 * redisIdempotency({ url }) } })` runs a retried request once across servers (docs/realtime.md).
 */
export function redisIdempotency(options: RedisIdempotencyOptions = {}): RedisIdempotencyStore {
  return new RedisIdempotencyStore(options);
}
