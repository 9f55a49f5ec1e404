// Coalesced publishes (`new App({ coalescePublishes })`, docs/protocol.md, "Batches"): the
// envelopes app.publish() sends to a topic are held and go out as one frame per topic, either
// after the poll phase of the event-loop iteration they were published in (`true`: every
// message uWS read in that iteration has been handled), or when a tick of `tick` ms ends
// (`{ tick }`: a game's state updates, many loop turns in one frame). One frame per topic and
// not per socket: each frame is one uWS publish, so the fan-out to subscribers stays in C++.
// The first onPublish metadata of a pending batch travels with it.
import type { BusMeta } from './bus/index.ts';

/** Sends one topic's frame: the envelope itself, or a JSON array of envelopes. */
export type SendBatch = (topic: string, frame: string, meta: BusMeta | undefined) => void;

export class TopicBatches {
  /** Envelopes held since the last flush, per topic, in order. */
  private readonly pending = new Map<string, string[]>();
  /** The first metadata of each pending batch, when onPublish hooks gave any. */
  private metas: Map<string, BusMeta> | null = null;
  /** A flush is scheduled (setImmediate, or the tick's timer is running). */
  private queued = false;
  private readonly send: SendBatch;
  /** Milliseconds held at most, or 0: until the end of the loop iteration. */
  private readonly tick: number;
  /** The hub's one tick timer, made by the first tick and re-armed (refresh) by the next ones. */
  private timer: NodeJS.Timeout | null = null;

  constructor(send: SendBatch, tick = 0) {
    this.send = send;
    this.tick = tick;
  }

  add(topic: string, envelope: string, meta: BusMeta | undefined): void {
    if (meta !== undefined && !(this.metas ??= new Map()).has(topic)) this.metas.set(topic, meta);
    const batch = this.pending.get(topic);
    if (batch !== undefined) {
      batch.push(envelope);
      return;
    }
    this.pending.set(topic, [envelope]);
    if (!this.queued) {
      this.queued = true;
      this.arm();
    }
  }

  /** Schedules the flush of what was just queued: nothing runs while nothing is held. */
  private arm(): void {
    if (this.tick === 0) setImmediate(this.onTick);
    else if (this.timer === null) {
      // Unref'd: a publish after the server closed must not keep the process alive.
      this.timer = setTimeout(this.onTick, this.tick);
      this.timer.unref();
    } else this.timer.refresh();
  }

  /**
   * Sends a topic's queued envelopes now: before anything that must come after them on the wire
   * (raw publishes, a socket's publish) or that changes who receives them (subscribe,
   * unsubscribe), so coalescing never reorders a topic or misdelivers.
   */
  flushTopic(topic: string): void {
    if (this.pending.size === 0) return;
    const envelopes = this.pending.get(topic);
    if (envelopes === undefined) return;
    this.pending.delete(topic);
    this.sendOne(topic, envelopes);
  }

  /** The loop iteration's or the tick's end. */
  private readonly onTick = (): void => {
    this.queued = false;
    for (const [topic, envelopes] of this.pending) this.sendOne(topic, envelopes);
    this.pending.clear();
  };

  /** Sends everything queued now and stops the tick's timer (shutdown). */
  flushAll(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.onTick();
  }

  private sendOne(topic: string, envelopes: string[]): void {
    const frame = envelopes.length === 1 ? envelopes[0]! : `[${envelopes.join(',')}]`;
    const meta = this.metas?.get(topic);
    if (meta !== undefined) this.metas!.delete(topic);
    this.send(topic, frame, meta);
  }
}
