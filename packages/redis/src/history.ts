// redisHistory(): a history store on Redis (docs/history.md). Each topic has a hash (`seq`,
// `epoch`) and a stream whose entry ids are the offsets (`<offset>-0`). A Lua script assigns
// the offset and appends in one step, so offsets are gap-free across every server sharing
// the Redis; MAXLEN bounds the stream by `size`, entries older than `ttl` are skipped when
// read, and with a ttl both keys expire `ttl` ms after the topic's last publish. If the hash
// is lost (evicted, expired, FLUSHALL), the next append or read draws a new epoch and
// empties the stream: clients holding an old position are told they did not recover.
import { createClient, type RedisClientOptions, type RedisClientType } from '@redis/client';
import {
  checkKnownKeys,
  judge,
  newEpoch,
  positionedEnvelope,
  type Appended,
  type HistoryOptions,
  type HistoryRead,
  type HistoryRequest,
  type HistoryStore,
} from '@tachyon/server';

export interface RedisHistoryOptions {
  /** `redis://…` or `rediss://…`. Default `redis://127.0.0.1:6379`. */
  url?: string;
  /** Key prefix: apps sharing one Redis use different prefixes. Default `tachyon:history:`. */
  prefix?: string;
  /** More node-redis client options (`username`, `password`, `socket: { tls, … }`…). */
  client?: Omit<RedisClientOptions, 'url'>;
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

export class RedisHistoryStore implements HistoryStore {
  readonly shared = true;
  private readonly client: RedisClientType<any, any, any, any, any>;
  private readonly prefix: string;
  /** Redis was reached once, or a connection attempt failed: from then on, no waiting while it is away. */
  private known = false;

  constructor(options: RedisHistoryOptions = {}) {
    if (typeof options !== 'object' || options === null) throw new TypeError('redisHistory(): options must be an object');
    checkKnownKeys('redisHistory()', options, ['url', 'prefix', 'client']);
    const url = options.url ?? 'redis://127.0.0.1:6379';
    if (!/^rediss?:\/\//.test(String(url))) throw new TypeError('redisHistory(): url must start with redis:// or rediss://');
    const prefix = options.prefix ?? 'tachyon:history:';
    if (typeof prefix !== 'string' || prefix.length > 128)
      throw new TypeError('redisHistory(): prefix must be a string of at most 128 characters');
    this.prefix = prefix;
    this.client = createClient({
      ...options.client,
      url,
      socket: { ...options.client?.socket, reconnectStrategy: (n: number) => Math.min(100 * 2 ** Math.min(n, 6), 5000) } as never,
    }) as never;
    // Errors while reconnecting are retried by node-redis. Commands wait in its queue only
    // during the first attempt: once Redis is known to be away they fail at once (see script()).
    this.client.on('error', () => void (this.known = true));
    this.client.on('ready', () => void (this.known = true));
    this.client.connect().catch(() => {});
  }

  /** Both keys of a topic share the hash tag `{topic}`: one slot in a Redis Cluster. */
  private keys(topic: string): [string, string] {
    return [`${this.prefix}{${topic}}:m`, `${this.prefix}{${topic}}:s`];
  }

  /**
   * EVAL, not EVALSHA: a NOSCRIPT answer (a restarted Redis) retried later would let the
   * next publishes overtake it and take smaller offsets. Redis caches the compiled script.
   */
  private script(source: string, keys: string[], args: string[]): Promise<unknown> {
    // node-redis's offline queue is unbounded, and a publish waiting in it is delivered to
    // nobody, not even locally: while Redis is away every history publish stalled and piled
    // up in memory. Failing instead sends the message live without a position (engine.ts).
    if (this.known && !this.client.isReady) return Promise.reject(new Error('redis history: not connected (reconnecting)'));
    return this.client.sendCommand(['EVAL', source, String(keys.length), ...keys, ...args]);
  }

  async append(topic: string, event: string, json: string | undefined, options: Readonly<HistoryOptions>): Promise<Appended> {
    const args = [newEpoch(), String(options.ttl ?? 0), String(options.size), String(Date.now()), event];
    if (json !== undefined) args.push(json);
    const [offset, epoch] = (await this.script(APPEND, this.keys(topic), args)) as [number, string];
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
    if (this.known && !this.client.isReady) throw new Error('redis history: not connected (reconnecting)');
    const stream = this.keys(topic)[1];
    if (options.ttl === undefined) return Number(await this.client.sendCommand(['XLEN', stream]));
    const raw = (await this.client.sendCommand(['XREVRANGE', stream, '+', '-', 'COUNT', String(options.size)])) as Entry[];
    const oldestKept = Date.now() - options.ttl;
    const end = raw.findIndex((e) => Number(e[1][1]) < oldestKept); // newest first, as readBack
    return end === -1 ? raw.length : end;
  }

  /** Never waits for a Redis that is down: closes when connected, else drops the connection attempts. */
  async close(): Promise<void> {
    await (this.client.isReady ? this.client.close() : Promise.resolve(this.client.destroy())).catch(() => {});
  }
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
