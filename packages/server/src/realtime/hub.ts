// The app's realtime side: connected sockets (for counts and shutdown) and publishing to
// topics through uWS's C++ pub/sub, with the payload serialized once per publish.
import { assertEventName, assertTopic, encodeData, topicEnvelope } from './protocol.ts';
import type { Socket } from './socket.ts';
import type { UwsApp } from '../uws/index.ts';

export class WsHub {
  private uws: UwsApp | null = null;
  private readonly sockets = new Set<Socket<any>>();
  private idle: (() => void)[] = [];
  /** Coalescing: envelopes published this event-loop iteration, per topic, in order. */
  private readonly batches: Map<string, string[]> | null;
  private flushQueued = false;
  private readonly flushAll = (): void => {
    this.flushQueued = false;
    const batches = this.batches!;
    for (const [topic, envelopes] of batches) this.publishBatch(topic, envelopes);
    batches.clear();
  };

  constructor(coalesce = false) {
    this.batches = coalesce ? new Map() : null;
  }

  /** @internal */
  attach(uws: UwsApp): void {
    this.uws = uws;
  }

  /** @internal */
  add(socket: Socket<any>): void {
    this.sockets.add(socket);
  }

  /** @internal */
  remove(socket: Socket<any>): void {
    if (!this.sockets.delete(socket) || this.sockets.size > 0) return;
    const idle = this.idle;
    this.idle = [];
    for (const wake of idle) wake();
  }

  get connections(): number {
    return this.sockets.size;
  }

  publish(topic: string, event: string, data?: unknown): boolean {
    assertTopic(topic);
    assertEventName(event);
    if (this.uws === null) return false;
    const envelope = topicEnvelope(topic, event, encodeData(data));
    const batches = this.batches;
    if (batches === null) return this.uws.publish(topic, envelope, false);
    const batch = batches.get(topic);
    if (batch !== undefined) batch.push(envelope);
    else {
      batches.set(topic, [envelope]);
      if (!this.flushQueued) {
        this.flushQueued = true;
        // After the poll phase: every message uWS read in this iteration has been handled.
        setImmediate(this.flushAll);
      }
    }
    return true;
  }

  /** Publishes a raw message (text or binary) to a topic. */
  publishRaw(topic: string, message: string | ArrayBuffer | Uint8Array, isBinary = typeof message !== 'string'): boolean {
    assertTopic(topic);
    if (this.uws === null) return false;
    this.flushTopic(topic);
    return this.uws.publish(topic, message, isBinary);
  }

  /**
   * Sends a topic's queued envelopes now. Called before anything that must come after them
   * on the wire (raw publishes, a socket's publish) or that changes who receives them
   * (subscribe, unsubscribe), so coalescing never reorders a topic or misdelivers. @internal
   */
  flushTopic(topic: string): void {
    const batches = this.batches;
    if (batches === null || batches.size === 0) return;
    const envelopes = batches.get(topic);
    if (envelopes === undefined) return;
    batches.delete(topic);
    this.publishBatch(topic, envelopes);
  }

  /** One frame per topic: the envelope itself, or a JSON array of envelopes (protocol.md, "Batches"). */
  private publishBatch(topic: string, envelopes: string[]): void {
    if (this.uws === null) return;
    this.uws.publish(topic, envelopes.length === 1 ? envelopes[0]! : `[${envelopes.join(',')}]`, false);
  }

  /** Sends everything queued (shutdown). @internal */
  flush(): void {
    if (this.batches !== null && this.batches.size > 0) this.flushAll();
  }

  subscribers(topic: string): number {
    return this.uws === null ? 0 : this.uws.numSubscribers(topic);
  }

  /** Closes every socket with `code` and resolves when all are gone (or after `timeout` ms, cutting the rest). */
  async closeAll(code: number, reason: string, timeout: number): Promise<void> {
    this.flush();
    if (this.sockets.size === 0) return;
    const gone = new Promise<void>((resolve) => this.idle.push(resolve));
    for (const s of [...this.sockets]) s.close(code, reason);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([gone.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timeout)))]);
    clearTimeout(timer);
    if (timedOut) for (const s of [...this.sockets]) s.terminate();
  }
}
