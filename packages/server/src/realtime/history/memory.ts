// The default history store: in this process's memory. Synchronous, so a recovering
// subscriber gets its replay and its live subscription in the same turn (no gap, no
// duplicate, without any bookkeeping). Its epoch is drawn when the store is created: a
// restarted process has lost its history, and a client's old position is refused.
//
// In a cluster() or behind a bus, each process would number a topic on its own: that is
// refused when the topic is declared (hub.ts), and a shared store (redisHistory) serves.
//
// Topics come and go (a room per game, per chat): a topic with a ttl that has kept nothing
// for longer than ttl is forgotten, as Redis forgets its keys (redis history), so that the
// store stays as big as the topics in use. The sweep runs when a new topic would make the
// store twice as big as after the last one: amortized O(1) per topic, no timer. A topic
// created after any sweep gets its own epoch, so that a position from a forgotten topic of
// the same name can never be taken for one of the new numbering (it is refused: 'epoch').
import type { HistoryOptions } from './options.ts';
import { positionedEnvelope } from './envelope.ts';
import { newEpoch } from './epoch.ts';
import { judge, type Appended, type HistoryRead, type HistoryRequest, type HistoryStore } from './store.ts';

/** One topic's kept messages: a ring of the last `size` envelopes, with their times for `ttl`. */
class TopicLog {
  /** Offset of the latest publish (0: none yet). */
  latest = 0;
  /** The epoch of this topic's positions. */
  readonly epoch: string;
  /** The ttl the topic was created with: without one, it is never forgotten. */
  readonly ttl: number | undefined;
  // The ring starts small and doubles up to `size`: a topic with a few messages costs little.
  private envelopes: string[] = new Array(8);
  private times: number[] = new Array(8);
  /** Slot of the oldest kept message, and how many are kept. */
  private head = 0;
  private count = 0;
  private readonly size: number;

  constructor(options: Readonly<HistoryOptions>, epoch: string) {
    this.size = options.size;
    this.ttl = options.ttl;
    this.epoch = epoch;
  }

  /** True when the topic has a ttl and it has passed since the newest kept message. */
  forgettable(now: number): boolean {
    if (this.ttl === undefined) return false;
    if (this.count === 0) return true;
    const newest = (this.head + this.count - 1) % this.envelopes.length;
    return now - this.times[newest]! > this.ttl;
  }

  push(envelope: string, now: number): void {
    let capacity = this.envelopes.length;
    if (this.count === capacity && capacity < this.size) this.grow((capacity = Math.min(capacity * 2, this.size)));
    const slot = (this.head + this.count) % capacity;
    this.envelopes[slot] = envelope;
    this.times[slot] = now;
    if (this.count < this.size) this.count++;
    else this.head = (this.head + 1) % capacity;
  }

  private grow(capacity: number): void {
    const envelopes: string[] = new Array(capacity);
    const times: number[] = new Array(capacity);
    const old = this.envelopes.length;
    for (let i = 0; i < this.count; i++) {
      envelopes[i] = this.envelopes[(this.head + i) % old]!;
      times[i] = this.times[(this.head + i) % old]!;
    }
    this.envelopes = envelopes;
    this.times = times;
    this.head = 0;
  }

  /** Forgets what is older than `ttl` (lazily, when the topic is used). */
  expire(ttl: number | undefined, now: number): void {
    if (ttl === undefined) return;
    const capacity = this.envelopes.length;
    while (this.count > 0 && now - this.times[this.head]! > ttl) {
      this.envelopes[this.head] = undefined as never; // let the string go
      this.head = (this.head + 1) % capacity;
      this.count--;
    }
  }

  /** Messages kept now. */
  get kept(): number {
    return this.count;
  }

  /** Offset of the oldest kept message (latest + 1 when none is kept). */
  get oldest(): number {
    return this.latest - this.count + 1;
  }

  /** Kept envelopes with an offset above `after`, oldest first. */
  after(after: number): string[] {
    const n = Math.min(this.count, this.latest - after);
    const out: string[] = new Array(Math.max(n, 0));
    const capacity = this.envelopes.length;
    for (let i = 0; i < n; i++) out[i] = this.envelopes[(this.head + this.count - n + i) % capacity]!;
    return out;
  }
}

/** The store is not swept below this many topics. */
const MIN_SWEEP = 1024;

export class MemoryHistoryStore implements HistoryStore {
  readonly shared = false;
  /** The epoch of topics created before the first sweep forgot one (and of unknown topics). */
  readonly epoch = newEpoch();
  private readonly logs = new Map<string, TopicLog>();
  private sweepAt = MIN_SWEEP;
  private forgotten = 0;

  /** Topics kept now. */
  get topics(): number {
    return this.logs.size;
  }

  append(topic: string, event: string, json: string | undefined, options: Readonly<HistoryOptions>): Appended {
    const now = Date.now();
    let log = this.logs.get(topic);
    if (log === undefined) log = this.create(topic, options, now);
    const offset = ++log.latest;
    const envelope = positionedEnvelope(topic, event, json, offset, log.epoch);
    log.push(envelope, now);
    log.expire(options.ttl, now);
    return { offset, epoch: log.epoch, envelope };
  }

  private create(topic: string, options: Readonly<HistoryOptions>, now: number): TopicLog {
    if (this.logs.size >= this.sweepAt) {
      this.sweep(now);
      this.sweepAt = Math.max(MIN_SWEEP, this.logs.size * 2);
    }
    const log = new TopicLog(options, this.forgotten === 0 ? this.epoch : newEpoch());
    this.logs.set(topic, log);
    return log;
  }

  /** Forgets the topics idle for longer than their ttl. */
  private sweep(now: number): void {
    for (const [topic, log] of this.logs) {
      if (!log.forgettable(now)) continue;
      this.logs.delete(topic);
      this.forgotten++;
    }
  }

  /** Messages kept for `topic` now (those past their ttl dropped first). */
  kept(topic: string, options: Readonly<HistoryOptions>): number {
    const log = this.logs.get(topic);
    if (log === undefined) return 0;
    log.expire(options.ttl, Date.now());
    return log.kept;
  }

  read(topic: string, request: HistoryRequest, options: Readonly<HistoryOptions>): HistoryRead {
    const log = this.logs.get(topic);
    log?.expire(options.ttl, Date.now());
    const latest = log?.latest ?? 0;
    const epoch = log?.epoch ?? this.epoch;
    if (request.since !== undefined) {
      const reason = judge(request.since, epoch, latest, log?.oldest ?? latest + 1);
      if (reason !== null) return { offset: latest, epoch, recovered: false, reason, envelopes: [] };
      return { offset: latest, epoch, recovered: true, envelopes: log?.after(request.since.offset) ?? [] };
    }
    const last = request.last ?? 0;
    return { offset: latest, epoch, recovered: false, envelopes: last > 0 && log !== undefined ? log.after(latest - last) : [] };
  }
}
