// Publishes on their way to the broker: at most `maxInFlight` sent and not yet confirmed,
// the rest waiting here in order, up to `maxQueue` messages and `maxQueueBytes` bytes. Past
// either bound a new publish is dropped (tail drop): the broker is slow or away, and memory
// must stay bounded (docs/scaling.md, "Delivery semantics").

/** Where an outbox sends: the transport, called only while it is up. */
export type OutboxSend = (topic: string | null, frame: Buffer) => void;

export interface OutboxLimits {
  maxInFlight: number;
  maxQueue: number;
  maxQueueBytes: number;
}

export class Outbox {
  private topics: (string | null)[] = [];
  private frames: Buffer[] = [];
  private head = 0;
  private bytes = 0;
  /** Sent and not yet confirmed by the broker. */
  inFlight = 0;
  /** Dropped because the queue was full (since start). */
  dropped = 0;
  /** Lost: sent, and the broker or the connection failed before confirming it. */
  failed = 0;
  /** Calls to settled() so far: the broker's answers, for the stall watch (stall.ts). */
  settles = 0;
  private open = false;
  private readonly limits: OutboxLimits;
  private readonly send: OutboxSend;

  constructor(limits: OutboxLimits, send: OutboxSend) {
    this.limits = limits;
    this.send = send;
  }

  get queued(): number {
    return this.frames.length - this.head;
  }

  get queuedBytes(): number {
    return this.bytes;
  }

  /** Sends now when the window allows and nothing waits, else queues. False when dropped. */
  push(topic: string | null, frame: Buffer): boolean {
    if (this.open && this.inFlight < this.limits.maxInFlight && this.head === this.frames.length) {
      this.inFlight++;
      this.send(topic, frame);
      return true;
    }
    if (this.queued >= this.limits.maxQueue || this.bytes + frame.byteLength > this.limits.maxQueueBytes) {
      this.dropped++;
      return false;
    }
    this.topics.push(topic);
    this.frames.push(frame);
    this.bytes += frame.byteLength;
    return true;
  }

  /** The transport is up (true) or down (false): while down, everything queues. */
  setOpen(open: boolean): void {
    this.open = open;
    if (open) this.drain();
  }

  /** `count` sends were confirmed (`ok`) or lost: the window reopens. */
  settled(count: number, ok: boolean): void {
    this.inFlight = Math.max(0, this.inFlight - count);
    this.settles++;
    if (!ok) this.failed += count;
    this.drain();
  }

  private drain(): void {
    const { topics, frames } = this;
    while (this.open && this.inFlight < this.limits.maxInFlight && this.head < frames.length) {
      const i = this.head++;
      const frame = frames[i]!;
      this.bytes -= frame.byteLength;
      this.inFlight++;
      this.send(topics[i]!, frame);
      frames[i] = EMPTY;
    }
    // Compact once the consumed prefix dominates: amortized O(1) per message.
    if (this.head > 1024 && this.head * 2 > frames.length) {
      this.topics = topics.slice(this.head);
      this.frames = frames.slice(this.head);
      this.head = 0;
    } else if (this.head === frames.length && this.head > 0) {
      this.topics = [];
      this.frames = [];
      this.head = 0;
    }
  }

  /** Forgets everything queued (close). */
  clear(): void {
    this.topics = [];
    this.frames = [];
    this.head = 0;
    this.bytes = 0;
  }
}

const EMPTY = Buffer.alloc(0);
