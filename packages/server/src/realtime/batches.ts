// Coalesced publishes (`new App({ coalescePublishes: true })`, docs/protocol.md, "Batches"):
// the envelopes app.publish() sends to a topic within one event-loop iteration go out as one
// frame, after the poll phase (every message uWS read in that iteration has been handled). The
// first onPublish metadata of a pending batch travels with it.
import type { BusMeta } from './bus/index.ts';

/** Sends one topic's frame: the envelope itself, or a JSON array of envelopes. */
export type SendBatch = (topic: string, frame: string, meta: BusMeta | undefined) => void;

export class TopicBatches {
  /** Envelopes published this iteration, per topic, in order. */
  private readonly pending = new Map<string, string[]>();
  /** The first metadata of each pending batch, when onPublish hooks gave any. */
  private metas: Map<string, BusMeta> | null = null;
  private queued = false;
  private readonly send: SendBatch;

  constructor(send: SendBatch) {
    this.send = send;
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
      setImmediate(this.flushAll);
    }
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

  /** Sends everything queued (the turn's end, or shutdown). */
  readonly flushAll = (): void => {
    this.queued = false;
    for (const [topic, envelopes] of this.pending) this.sendOne(topic, envelopes);
    this.pending.clear();
  };

  private sendOne(topic: string, envelopes: string[]): void {
    const frame = envelopes.length === 1 ? envelopes[0]! : `[${envelopes.join(',')}]`;
    const meta = this.metas?.get(topic);
    if (meta !== undefined) this.metas!.delete(topic);
    this.send(topic, frame, meta);
  }
}
