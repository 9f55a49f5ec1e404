// The default history store: in this process's memory. Synchronous, so a recovering
// subscriber gets its replay and its live subscription in the same turn (no gap, no
// duplicate, without any bookkeeping). Its epoch is drawn when the store is created: a
// restarted process has lost its history, and a client's old position is refused.
//
// In a cluster() or behind a bus, each process would number a topic on its own: that is
// refused when the topic is declared (check.ts), and a shared store (redisHistory) serves.
import type { HistoryOptions } from './options.ts';
import { positionedEnvelope } from './envelope.ts';
import { newEpoch } from './epoch.ts';
import { judge, type Appended, type HistoryRead, type HistoryRequest, type HistoryStore } from './store.ts';

/** One topic's kept messages: a ring of the last `size` envelopes, with their times for `ttl`. */
class TopicLog {
  /** Offset of the latest publish (0: none yet). */
  latest = 0;
  // The ring starts small and doubles up to `size`: a topic with a few messages costs little.
  private envelopes: string[] = new Array(8);
  private times: number[] = new Array(8);
  /** Slot of the oldest kept message, and how many are kept. */
  private head = 0;
  private count = 0;
  private readonly size: number;

  constructor(size: number) {
    this.size = size;
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

export class MemoryHistoryStore implements HistoryStore {
  readonly shared = false;
  readonly epoch = newEpoch();
  private readonly logs = new Map<string, TopicLog>();

  append(topic: string, event: string, json: string | undefined, options: Readonly<HistoryOptions>): Appended {
    let log = this.logs.get(topic);
    if (log === undefined) this.logs.set(topic, (log = new TopicLog(options.size)));
    const offset = ++log.latest;
    const envelope = positionedEnvelope(topic, event, json, offset, this.epoch);
    const now = Date.now();
    log.push(envelope, now);
    log.expire(options.ttl, now);
    return { offset, epoch: this.epoch, envelope };
  }

  read(topic: string, request: HistoryRequest, options: Readonly<HistoryOptions>): HistoryRead {
    const log = this.logs.get(topic);
    log?.expire(options.ttl, Date.now());
    const latest = log?.latest ?? 0;
    const epoch = this.epoch;
    if (request.since !== undefined) {
      const reason = judge(request.since, epoch, latest, log?.oldest ?? latest + 1);
      if (reason !== null) return { offset: latest, epoch, recovered: false, reason, envelopes: [] };
      return { offset: latest, epoch, recovered: true, envelopes: log?.after(request.since.offset) ?? [] };
    }
    const last = request.last ?? 0;
    return { offset: latest, epoch, recovered: false, envelopes: last > 0 && log !== undefined ? log.after(latest - last) : [] };
  }
}
