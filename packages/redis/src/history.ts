// redisHistory(): a history store on Redis (docs/history.md). Each topic has a hash (`seq`,
// `epoch`) and a stream whose entry ids are the offsets (`<offset>-0`). A Lua script assigns
// the offset and appends in one step, so offsets are gap-free across every server sharing
// the Redis; MAXLEN bounds the stream by `size`, entries older than `ttl` are skipped when
// read, and with a ttl both keys expire `ttl` ms after the topic's last publish. If the hash
// is lost (evicted, expired, FLUSHALL), the next append or read draws a new epoch and
// empties the stream: clients holding an old position are told they did not recover.
import { createClient, type RedisClientOptions } from '@redis/client';
import {
  checkKnownKeys,
  silentLogger,
  judge,
  newEpoch,
  positionedEnvelope,
  type Appended,
  type HistoryOptions,
  type HistoryRead,
  type HistoryRequest,
  type HistoryStore,
  type Logger,
} from '@tachyon/server';
import { PendingCommands } from './pending.ts';
import { checkSentinel, connectSentinel, sentinelClient, type RedisSentinelOptions } from './sentinel.ts';

export interface RedisHistoryOptions {
  /** `redis://…` or `rediss://…`. Default `redis://127.0.0.1:6379`. */
  url?: string;
  /** Redis Sentinel instead of `url`: the history follows a failover to the promoted replica (docs/history.md). */
  sentinel?: RedisSentinelOptions;
  /** Key prefix: apps sharing one Redis use different prefixes. Default `tachyon:history:`. */
  prefix?: string;
  /** More node-redis client options (`username`, `password`, `socket: { tls, … }`…). */
  client?: Omit<RedisClientOptions, 'url'>;
  /**
   * Commands sent to Redis and not answered yet (one append per publish on a history topic,
   * one read per subscribe with history). A frozen Redis answers nothing while its connection
   * stays open: past this bound, a publish goes out live without a position and is not kept
   * (logged once per episode, counted in `stats().overflowed`). Default 10 000.
   */
  maxPending?: number;
  /** The same bound on the bytes of the data those appends carry. Default 16 MiB. */
  maxPendingBytes?: number;
}

/** What `RedisHistoryStore#stats()` counts, for metrics and alerts. */
export interface RedisHistoryStats {
  /** The connection to Redis is up (it may still be frozen: see `pending`). */
  connected: boolean;
  /** Commands sent and not answered yet, and the bytes of the data they carry. */
  pending: number;
  pendingBytes: number;
  /** Commands refused because `maxPending` or `maxPendingBytes` was reached (publishes not kept). */
  overflowed: number;
  /** Commands refused because Redis was unreachable (publishes not kept). */
  offline: number;
}

// KEYS: meta hash, stream. ARGV: candidate epoch, ttl (0: none), size, time, event, [data].
const APPEND = `
local epoch = redis.call('HGET', KEYS[1], 'epoch')
if not epoch then
  epoch = ARGV[1]
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[1], 'epoch', epoch, 'seq', 0)
end
local offset = redis.call('HINCRBY', KEYS[1], 'seq', 1)
if ARGV[6] then
  redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[3], offset .. '-0', 't', ARGV[4], 'e', ARGV[5], 'd', ARGV[6])
else
  redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[3], offset .. '-0', 't', ARGV[4], 'e', ARGV[5])
end
if ARGV[2] ~= '0' then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
return {offset, epoch}`;

// KEYS: meta hash, stream. ARGV: candidate epoch, ttl, 'since' or 'last', n.
// Returns {seq, epoch, entries}: entries after offset n (since), or the last n (last).
const READ = `
local epoch = redis.call('HGET', KEYS[1], 'epoch')
if not epoch then
  epoch = ARGV[1]
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[1], 'epoch', epoch, 'seq', 0)
  if ARGV[2] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
end
local seq = tonumber(redis.call('HGET', KEYS[1], 'seq'))
local entries
if ARGV[3] == 'since' then
  local from = tonumber(ARGV[4])
  if from >= seq then entries = {} else entries = redis.call('XRANGE', KEYS[2], string.format('%d-0', from + 1), '+') end
elseif tonumber(ARGV[4]) > 0 then
  entries = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', ARGV[4])
else
  entries = {}
end
return {seq, epoch, entries}`;

type Entry = [id: string, fields: string[]];

/** One error for every refusal: a frozen Redis under traffic refuses thousands (the engine logs them on the 1st, 2nd, 4th…). */
const OVERFLOW = new Error('redis history: maxPending or maxPendingBytes reached, Redis answers nothing: not kept');

export class RedisHistoryStore implements HistoryStore {
  readonly shared = true;
  private readonly conn: Connection;
  private readonly prefix: string;
  /** Redis was reached once, or a connection attempt failed: from then on, no waiting while it is away. */
  private known = false;
  private readonly pending: PendingCommands;
  private logger: Logger = silentLogger;
  private offline = 0;

  constructor(options: RedisHistoryOptions = {}) {
    if (typeof options !== 'object' || options === null) throw new TypeError('redisHistory(): options must be an object');
    checkKnownKeys('redisHistory()', options, ['url', 'sentinel', 'prefix', 'client', 'maxPending', 'maxPendingBytes']);
    const url = options.url ?? 'redis://127.0.0.1:6379';
    if (!/^rediss?:\/\//.test(String(url))) throw new TypeError('redisHistory(): url must start with redis:// or rediss://');
    const sentinel = options.sentinel === undefined ? null : checkSentinel('redisHistory()', options.sentinel);
    if (sentinel !== null && options.url !== undefined) throw new TypeError('redisHistory(): give url or sentinel, not both');
    const prefix = options.prefix ?? 'tachyon:history:';
    if (typeof prefix !== 'string' || prefix.length > 128)
      throw new TypeError('redisHistory(): prefix must be a string of at most 128 characters');
    this.prefix = prefix;
    const bound = (name: 'maxPending' | 'maxPendingBytes', fallback: number): number => {
      const v = options[name] ?? fallback;
      if (!Number.isSafeInteger(v) || v < 1) throw new TypeError(`redisHistory(): ${name} must be a positive integer`);
      return v;
    };
    this.pending = new PendingCommands(
      { maxPending: bound('maxPending', 10_000), maxPendingBytes: bound('maxPendingBytes', 16 << 20) },
      () => this.logger,
    );
    const delay = (n: number) => Math.min(100 * 2 ** Math.min(n, 6), 5000);
    const client = { ...options.client, socket: { ...options.client?.socket, reconnectStrategy: delay } as never };
    // Errors while reconnecting are retried by node-redis. Commands wait only during the first
    // attempt: once Redis is known to be away they fail at once (see command()).
    const known = () => void (this.known = true);
    this.conn = sentinel === null ? plainConnection(url, client, known) : sentinelConnection(sentinel, client, delay, known);
  }

  /** Both keys of a topic share the hash tag `{topic}`: one slot in a Redis Cluster. */
  private keys(topic: string): [string, string] {
    return [`${this.prefix}{${topic}}:m`, `${this.prefix}{${topic}}:s`];
  }

  /** The app's logger (app.topic() hands it over), where the pending bound's episodes are logged. */
  useLogger(logger: Logger): void {
    this.logger = logger;
  }

  /**
   * Sends a command, unless Redis is unreachable or the pending bound is reached: then it
   * fails at once. `bytes`: the data it carries, for maxPendingBytes.
   */
  private command(args: string[], bytes: number): Promise<unknown> {
    // node-redis's offline queue is unbounded, and a publish waiting in it is delivered to
    // nobody, not even locally: while Redis is away every history publish stalled and piled
    // up in memory. Failing instead sends the message live without a position (engine.ts).
    if (this.known && !this.conn.ready) {
      this.offline++;
      return Promise.reject(new Error('redis history: not connected (reconnecting)'));
    }
    // Connected but frozen: commands wait for their reply in node-redis, up to the bound.
    if (!this.pending.admit(bytes)) return Promise.reject(OVERFLOW);
    return this.conn.send(args).finally(() => this.pending.done(bytes));
  }

  /**
   * EVAL, not EVALSHA: a NOSCRIPT answer (a restarted Redis) retried later would let the
   * next publishes overtake it and take smaller offsets. Redis caches the compiled script.
   */
  private script(source: string, keys: string[], args: string[], bytes = 0): Promise<unknown> {
    return this.command(['EVAL', source, String(keys.length), ...keys, ...args], bytes);
  }

  /** Counters for metrics and tests. */
  stats(): RedisHistoryStats {
    return {
      connected: this.conn.ready,
      pending: this.pending.count,
      pendingBytes: this.pending.bytes,
      overflowed: this.pending.overflowed,
      offline: this.offline,
    };
  }

  async append(topic: string, event: string, json: string | undefined, options: Readonly<HistoryOptions>): Promise<Appended> {
    const args = [newEpoch(), String(options.ttl ?? 0), String(options.size), String(Date.now()), event];
    let bytes = 0;
    if (json !== undefined) {
      args.push(json);
      bytes = Buffer.byteLength(json);
    }
    const [offset, epoch] = (await this.script(APPEND, this.keys(topic), args, bytes)) as [number, string];
    return { offset, epoch, envelope: positionedEnvelope(topic, event, json, offset, epoch) };
  }

  async read(topic: string, request: HistoryRequest, options: Readonly<HistoryOptions>): Promise<HistoryRead> {
    const since = request.since;
    const args = [newEpoch(), String(options.ttl ?? 0), since !== undefined ? 'since' : 'last', String(since?.offset ?? request.last ?? 0)];
    return readBack(topic, request, options, (await this.script(READ, this.keys(topic), args)) as ReadReply, Date.now());
  }

  /**
   * Messages kept for `topic` now, as a subscriber asking for the last `size` would get them
   * (the dashboard's history column): the stream's length, or without a ttl's expired run at
   * the old end. One XLEN, or one XREVRANGE of at most `size` entries with a ttl. Reads only:
   * never draws an epoch or creates a key.
   */
  async kept(topic: string, options: Readonly<HistoryOptions>): Promise<number> {
    const stream = this.keys(topic)[1];
    if (options.ttl === undefined) return Number(await this.command(['XLEN', stream], 0));
    const raw = (await this.command(['XREVRANGE', stream, '+', '-', 'COUNT', String(options.size)], 0)) as Entry[];
    const oldestKept = Date.now() - options.ttl;
    const end = raw.findIndex((e) => Number(e[1][1]) < oldestKept); // newest first, as readBack
    return end === -1 ? raw.length : end;
  }

  /** Never waits for a Redis that is down or frozen: closes when connected and answering, else drops the connection. */
  async close(): Promise<void> {
    await this.conn.close(this.pending.count === 0).catch(() => {});
  }
}

/** The store's one connection to Redis: a client on `url`, or a sentinel client following the primary. */
interface Connection {
  /** Commands may be sent: connected, or (a sentinel client) open, whose commands wait for the primary through a failover. */
  readonly ready: boolean;
  send(args: string[]): Promise<unknown>;
  /** `graceful`: nothing is pending, wait for the connection to close cleanly. */
  close(graceful: boolean): Promise<void>;
}

function plainConnection(url: string, options: Omit<RedisClientOptions, 'url'>, known: () => void): Connection {
  // Without an offline queue: node-redis otherwise keeps the commands it had not written yet
  // when the connection drops, and writes them after the reconnect. An append made just
  // before Redis died then took a position after the publishes that went out live (without
  // one) meanwhile: every client got it out of order (test/buses/faults.test.ts, SIGKILL).
  const c = createClient({ ...options, url, disableOfflineQueue: true });
  // Until the first attempt ends (ready, or an error), commands wait for it, in the order
  // they came: then they go, or fail at once (Redis away), as every command after them.
  const firstAttempt = new Promise<void>((settle) => void c.once('ready', settle).once('error', settle));
  c.on('error', known).on('ready', known);
  c.connect().catch(() => {});
  return {
    get ready() {
      return c.isReady;
    },
    // Through a promise also once connected: the engine delivers each publish when its append
    // settles, so every append's reply must travel the same number of promise steps. Sent
    // directly, appends made just after the connection came up settled before those that had
    // waited for it, when Redis answered them all in one read.
    send: (args) => firstAttempt.then(() => c.sendCommand(args)),
    close: async (graceful) => (graceful && c.isReady ? c.close() : c.destroy()),
  };
}

function sentinelConnection(
  sentinel: RedisSentinelOptions,
  options: Omit<RedisClientOptions, 'url'>,
  delay: (n: number) => number,
  known: () => void,
): Connection {
  const s = sentinelClient(sentinel, options);
  s.on('error', known).on('ready', known);
  const connecting = connectSentinel(s, delay, known, known);
  return {
    // Open, not ready: while the client moves to a promoted replica, commands wait for it (up
    // to maxPending) rather than fail, which would send their publishes ahead of those waiting.
    get ready() {
      return s.isOpen;
    },
    send: (args) => s.sendCommand(undefined, args),
    close: async (graceful) => {
      connecting.stop();
      await (graceful && s.isReady ? s.close() : s.destroy());
    },
  };
}

/** What the READ script answers: the topic's sequence, its epoch, and the entries asked for (newest first for `last`). */
export type ReadReply = [seq: number, epoch: string, entries: Entry[]];

/**
 * The history read from the READ script's reply, as Redis sent it back (exported for the fuzz
 * target: it is all the parsing of what Redis stores). `now` decides which entries outlived the ttl.
 */
export function readBack(
  topic: string,
  request: HistoryRequest,
  options: Readonly<HistoryOptions>,
  reply: ReadReply,
  now: number,
): HistoryRead {
  const since = request.since;
  const [seq, epoch, raw] = reply;
  const oldestKept = now - (options.ttl ?? Infinity);
  // Servers append with their own clocks, so times are not ordered: only an expired run at the
  // old end is dropped (a kept entry keeps those after it), never one between kept ones, which
  // would leave a gap in a read that says `recovered` (fuzz/targets/redis-history.mjs).
  const fresh = (e: Entry) => Number(e[1][1]) >= oldestKept;
  let entries: Entry[];
  if (since === undefined) {
    const end = raw.findIndex((e) => !fresh(e)); // newest first: keep up to the first expired
    entries = end === -1 ? raw.slice() : raw.slice(0, end);
  } else {
    const start = raw.findIndex(fresh); // oldest first: drop up to the first kept
    entries = start === -1 ? [] : raw.slice(start);
  }
  if (since === undefined) {
    entries.reverse();
    return { offset: seq, epoch, recovered: false, envelopes: entries.map((e) => envelope(topic, e, epoch)) };
  }
  // The first entry after `since` must still be kept; else the window has moved past it.
  const first = entries.length > 0 ? Number(entries[0]![0].split('-')[0]) : seq + 1;
  const reason = judge(since, epoch, seq, first === since.offset + 1 ? first : Math.max(first, since.offset + 2));
  if (reason !== null) entries = [];
  return {
    offset: seq,
    epoch,
    recovered: reason === null,
    ...(reason === null ? {} : { reason }),
    envelopes: entries.map((e) => envelope(topic, e, epoch)),
  };
}

function envelope(topic: string, [id, f]: Entry, epoch: string): string {
  // Fields: t, <time>, e, <event>[, d, <data>]
  return positionedEnvelope(topic, f[3]!, f[5], Number(id.split('-')[0]), epoch);
}

/** A history store on Redis, shared by every server (docs/history.md): `app.topic('room:*', { history: { size: 100, store: redisHistory({ url }) } })`. */
export function redisHistory(options: RedisHistoryOptions = {}): RedisHistoryStore {
  return new RedisHistoryStore(options);
}
