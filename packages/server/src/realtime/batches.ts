// Coalesced publishes (`new App({ coalescePublishes })`, docs/protocol.md, "Batches"): the
// envelopes app.publish() sends to a topic are held and go out as one frame per topic, either
// after the poll phase of the event-loop iteration they were published in (`true`: every
// message uWS read in that iteration has been handled), or `tick` ms after the topic's first
// held envelope (`{ tick }`: a game's state updates, many loop turns in one frame). One frame
// per topic and not per socket: each frame is one uWS publish, so the fan-out to subscribers
// stays in C++. The first onPublish metadata of a pending batch travels with it.
//
// Each topic keeps its own deadline, rather than every topic leaving at one shared tick: a
// shared tick sends every room of a game server in one burst (thousands of writes), and each
// event read during that burst waits for all of it (the typing race at 3,600 players with a
// 100 ms tick: 49 ms of event-loop delay, bench/README.md). Deadlines come in the order topics
// were first held, so the held batches form a queue and one timer, for the queue's head, is
// enough.
//
// Each topic's Batch object (its envelopes and its first onPublish metadata) is kept and reused
// while the topic is in use (idle ones are swept once a second), and the queue is an array:
// holding and sending add and delete no Map entries. A
// Map that gains and loses an entry per topic per tick (or is cleared every tick) rehashes
// into a new table again and again, and V8 links each obsolete table to its successor, with
// the held envelopes still in it: once one table is promoted, the chain keeps every later
// batch alive through scavenges (measured: 25% of the young generation surviving, 20-30 ms
// scavenges at 3,000 players, against 0.4% without a tick).
import type { BusMeta } from './bus/index.ts';

/** Sends one topic's frame: the envelope itself, or a JSON array of envelopes. */
export type SendBatch = (topic: string, frame: string, meta: BusMeta | undefined) => void;

/** One topic's held envelopes. */
interface Batch {
  readonly topic: string;
  readonly envelopes: string[];
  /** When it must leave (performance.now() ms; tick mode). */
  due: number;
  /** Its position in the queue (counted since the start), or -1: nothing held. */
  slot: number;
  /** The sweep round it was last held in. */
  round: number;
  /** The first onPublish metadata of what is held, if hooks gave any: it travels with the frame. */
  meta: BusMeta | undefined;
}

/**
 * Timers have whole milliseconds: a topic due within this much of a flush leaves with it
 * (at most 1 ms early) rather than a timer turn later.
 */
const SLACK_MS = 1;
/** Batches not held for a whole round of this length are dropped (a topic nobody publishes to any more). */
const SWEEP_MS = 1000;

export class TopicBatches {
  private readonly batches = new Map<string, Batch>();
  /**
   * Held batches in the order they were first held (so by deadline). An entry whose batch has
   * another slot was sent early (flushTopic) and is skipped. queue[i] has position base + i.
   */
  private readonly queue: Batch[] = [];
  private head = 0;
  private base = 0;
  /** A flush is scheduled (setImmediate, or the tick's timer). */
  private queued = false;
  private readonly send: SendBatch;
  /** Milliseconds held at most, or 0: until the end of the loop iteration. */
  private readonly tick: number;
  /** The timer of the queue head's deadline (tick mode), or null. */
  private timer: NodeJS.Timeout | null = null;
  private round = 0;
  private roundEnds = 0;

  constructor(send: SendBatch, tick = 0) {
    this.send = send;
    this.tick = tick;
  }

  add(topic: string, envelope: string, meta: BusMeta | undefined): void {
    let b = this.batches.get(topic);
    if (b === undefined) {
      b = { topic, envelopes: [], due: 0, slot: -1, round: 0, meta: undefined };
      this.batches.set(topic, b);
    }
    b.envelopes.push(envelope);
    if (b.meta === undefined) b.meta = meta;
    if (b.slot !== -1) return;
    b.slot = this.base + this.queue.length;
    b.round = this.round;
    this.queue.push(b);
    if (this.tick !== 0) b.due = performance.now() + this.tick;
    if (!this.queued) {
      this.queued = true;
      if (this.tick === 0) setImmediate(this.onIteration);
      else this.arm(this.tick);
    }
  }

  /** The flush `ms` from now. Unref'd: a publish after the server closed must not keep the process alive. */
  private arm(ms: number): void {
    this.timer = setTimeout(this.onTimer, ms);
    this.timer.unref();
  }

  /**
   * Sends a topic's held envelopes now: before anything that must come after them on the wire
   * (raw publishes, a socket's publish) or that changes who receives them (subscribe,
   * unsubscribe), so coalescing never reorders a topic or misdelivers. Its queue entry stays,
   * skipped when reached; the timer stays armed for the deadline it was set to.
   */
  flushTopic(topic: string): void {
    const b = this.batches.get(topic);
    if (b !== undefined && b.slot !== -1) this.sendOne(b);
  }

  /** The end of the loop iteration (no tick): everything held goes. */
  private readonly onIteration = (): void => {
    this.queued = false;
    this.sendDue(Number.POSITIVE_INFINITY);
    const now = performance.now();
    if (now >= this.roundEnds) this.sweep(now);
  };

  /** The head's deadline came: every batch due by now goes, and the timer moves to the next deadline. */
  private readonly onTimer = (): void => {
    this.timer = null;
    const now = performance.now();
    const next = this.sendDue(now + SLACK_MS);
    if (next === -1) this.queued = false;
    else this.arm(Math.ceil(next - now));
    if (now >= this.roundEnds) this.sweep(now);
  };

  /**
   * Sends the queued batches due by `limit`, in order; returns the deadline of the first one
   * not due, or -1 when the queue is empty. A batch held during a send (a bus that publishes
   * back) joins the queue's end with a later deadline.
   */
  private sendDue(limit: number): number {
    const q = this.queue;
    while (this.head < q.length) {
      const b = q[this.head]!;
      if (b.slot !== this.base + this.head) {
        this.head++;
        continue;
      }
      if (b.due > limit) {
        this.compact();
        return b.due;
      }
      this.head++;
      this.sendOne(b);
    }
    this.base += q.length;
    q.length = 0;
    this.head = 0;
    return -1;
  }

  /** Drops the queue's visited entries once they are most of it, in place (no new array). */
  private compact(): void {
    const q = this.queue;
    if (this.head < 1024 || this.head * 2 < q.length) return;
    q.copyWithin(0, this.head);
    q.length -= this.head;
    this.base += this.head;
    this.head = 0;
  }

  /** A new round: batches of topics not held during the last whole one go. */
  private sweep(now: number): void {
    for (const [topic, b] of this.batches) if (b.slot === -1 && b.round < this.round) this.batches.delete(topic);
    this.round++;
    this.roundEnds = now + SWEEP_MS;
  }

  /** Topics whose batch object is kept: held now, or held within the last sweep round. */
  get kept(): number {
    return this.batches.size;
  }

  /** Sends everything held now and stops the tick's timer (shutdown). */
  flushAll(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.queued = false;
    this.sendDue(Number.POSITIVE_INFINITY);
  }

  private sendOne(b: Batch): void {
    const envelopes = b.envelopes;
    const frame = envelopes.length === 1 ? envelopes[0]! : `[${envelopes.join(',')}]`;
    // Emptied before the send: whatever the send publishes to this topic starts a new batch.
    envelopes.length = 0;
    b.slot = -1;
    const meta = b.meta;
    b.meta = undefined;
    this.send(b.topic, frame, meta);
  }
}
