// History on the hub: publishes on history topics go through their store (which gives them
// their position) before they are delivered, and subscribes that ask for history get the
// replay, then the live subscription, then the `subscribed` answer with the position.
//
// No gap, no duplicate across the replay/live boundary:
//  - a synchronous store (memory): read, replay and subscribe happen in one turn, so no
//    publish can come in between;
//  - an asynchronous store (Redis): while the read is in flight, this process records every
//    envelope it delivers on the topic (its own publishes and the bus's); when the read
//    answers, the socket gets the read envelopes, then the recorded ones with a higher
//    offset, then its subscription, all in one turn.
import type { Logger } from '../../core/logger.ts';
import type { BusMeta } from '../bus/index.ts';
import type { Socket } from '../socket.ts';
import { deniedFrame, topicEnvelope } from '../protocol.ts';
import { offsetOf } from './envelope.ts';
import { positionedSubscribedFrame } from './frames.ts';
import { MemoryHistoryStore } from './memory.ts';
import type { HistoryOptions } from './options.ts';
import type { Appended, HistoryRead, HistoryRequest, HistoryStore } from './store.ts';
import { logThrottled } from '../../core/throttled-log.ts';

/**
 * Delivers an envelope to local subscribers (except `from`, a publishing socket) and the bus,
 * with the onPublish hooks' metadata (a trace context): the store positions the message, the
 * bus carries it, so the metadata waits beside the append and goes out with the envelope.
 */
export type Deliver = (topic: string, envelope: string, from: Socket<any> | null, meta: BusMeta | undefined) => boolean;

/** Envelopes delivered on a topic while a recovery's read was in flight. */
interface Recording {
  readonly seen: string[];
}

export class HistoryEngine {
  private memory: MemoryHistoryStore | null = null;
  private readonly recordings = new Map<string, Set<Recording>>();
  private appendFailures = 0;

  private readonly deliver: Deliver;
  private readonly logger: Logger;

  constructor(deliver: Deliver, logger: Logger) {
    this.deliver = deliver;
    this.logger = logger;
  }

  /** In a cluster() worker: the primary's memory store, shared by every worker. */
  private fallback: HistoryStore | null = null;

  /** Makes `store` the default (a cluster worker's App without a bus of its own). */
  useDefault(store: HistoryStore): void {
    this.fallback = store;
  }

  /** True when topics without a store of their own share their history with the other processes. */
  get sharedDefault(): boolean {
    return this.fallback !== null;
  }

  /** The store of a history topic: its own, the cluster's, or this process's memory. */
  storeFor(h: Readonly<HistoryOptions>): HistoryStore {
    return h.store ?? this.fallback ?? (this.memory ??= new MemoryHistoryStore());
  }

  /** True while some recovery waits for an asynchronous read: deliveries are then recorded. */
  get recording(): boolean {
    return this.recordings.size > 0;
  }

  /** An envelope was delivered on `topic` (by this process or from the bus). */
  delivered(topic: string, envelope: unknown): void {
    const set = this.recordings.get(topic);
    if (set !== undefined && typeof envelope === 'string') for (const r of set) r.seen.push(envelope);
  }

  publish(
    topic: string,
    event: string,
    json: string | undefined,
    h: Readonly<HistoryOptions>,
    from: Socket<any> | null,
    meta: BusMeta | undefined,
  ): boolean {
    let appended: Appended | Promise<Appended>;
    try {
      appended = this.storeFor(h).append(topic, event, json, h);
    } catch (err) {
      return this.unkept(err, topic, event, json, from, meta);
    }
    if (!(appended instanceof Promise)) return this.deliver(topic, appended.envelope, from, meta);
    // Replies come back in the order the store got the appends: a topic's order is kept.
    appended.then(
      (a) => this.deliver(topic, a.envelope, from, meta),
      (err) => this.unkept(err, topic, event, json, from, meta),
    );
    return true;
  }

  /** The store failed: the message still goes out live, without a position (clients keep theirs). */
  private unkept(
    err: unknown,
    topic: string,
    event: string,
    json: string | undefined,
    from: Socket<any> | null,
    meta: BusMeta | undefined,
  ): boolean {
    const n = ++this.appendFailures;
    // One per publish while the store is down: throttled, with the running count.
    logThrottled(this.logger, 'error', { err, topic, failures: n }, 'history: store append failed; published live without a position');
    return this.deliver(topic, topicEnvelope(topic, event, json), from, meta);
  }

  /** Subscribes `s` to a history topic, with the replay `request` asks for (null: the position only). */
  subscribe(
    s: Socket<any>,
    topic: string,
    h: Readonly<HistoryOptions>,
    request: HistoryRequest | null,
    ref: number | undefined,
    async: boolean,
  ): void {
    const req = request ?? {};
    const capped: HistoryRequest = req.last !== undefined && req.last > h.size ? { last: h.size } : req;
    let read: HistoryRead | Promise<HistoryRead>;
    try {
      read = this.storeFor(h).read(topic, capped, h);
    } catch (err) {
      return this.readFailed(err, s, topic, ref, async);
    }
    if (!(read instanceof Promise)) return this.finish(s, topic, req, read, ref, async, null);
    const recording: Recording = { seen: [] };
    let set = this.recordings.get(topic);
    if (set === undefined) this.recordings.set(topic, (set = new Set()));
    set.add(recording);
    const stop = () => {
      set.delete(recording);
      if (set.size === 0 && this.recordings.get(topic) === set) this.recordings.delete(topic);
    };
    read.then(
      (r) => {
        stop();
        this.finish(s, topic, req, r, ref, true, recording);
      },
      (err) => {
        stop();
        this.readFailed(err, s, topic, ref, true);
      },
    );
  }

  /**
   * The store could not be read (Redis reconnecting, or past its pending bound): a failure that
   * may pass, so the reason is `unavailable`, not `error`. A client keeps the topic and asks
   * again after a backoff (docs/protocol.md); `error` would make it drop the topic for good.
   */
  private readFailed(err: unknown, s: Socket<any>, topic: string, ref: number | undefined, async: boolean): void {
    // Clients retry an `unavailable` subscribe: one line per client per retry while the store is down, throttled.
    logThrottled(this.logger, 'error', { err, topic }, 'history: store read failed; subscribe denied (unavailable)');
    send(s, deniedFrame(topic, ref, 'unavailable'), async);
  }

  private finish(
    s: Socket<any>,
    topic: string,
    req: HistoryRequest,
    read: HistoryRead,
    ref: number | undefined,
    async: boolean,
    recording: Recording | null,
  ): void {
    if (s.closed) return;
    if (req.since !== undefined && !read.recovered) {
      const info = { ip: s.ip, topic, since: req.since, at: { offset: read.offset, epoch: read.epoch }, reason: read.reason };
      if (read.reason === 'ahead') this.logger.warn(info, 'history: recovery refused, position ahead of the topic');
      else this.logger.info(info, 'history: recovery refused');
    }
    const run = () => {
      let offset = read.offset;
      for (const envelope of read.envelopes) s.sendRaw(envelope, false);
      // Delivered meanwhile, after what the read saw: this socket was not subscribed yet.
      if (recording !== null) {
        for (const envelope of recording.seen) {
          const o = offsetOf(envelope);
          if (o > offset) {
            s.sendRaw(envelope, false);
            offset = o;
          }
        }
      }
      s.subscribe(topic);
      s.sendRaw(
        positionedSubscribedFrame(topic, ref, { offset, epoch: read.epoch }, req.since === undefined ? undefined : read.recovered),
        false,
      );
    };
    if (async) s.cork(run);
    else run();
  }

  /** Closes every store the app used (its own memory store needs nothing). */
  async close(stores: Iterable<HistoryStore>): Promise<void> {
    for (const store of new Set(stores)) {
      try {
        await store.close?.();
      } catch (err) {
        this.logger.error({ err }, 'history: store close failed');
      }
    }
  }
}

function send(s: Socket<any>, text: string, async: boolean): void {
  if (s.closed) return;
  if (async) s.cork(() => s.sendRaw(text, false));
  else s.sendRaw(text, false);
}
