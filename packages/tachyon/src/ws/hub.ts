// The app's realtime side: connected sockets (for counts and shutdown) and publishing to
// topics through uWS's C++ pub/sub, with the payload serialized once per publish.
import { assertEventName, assertTopic, encodeData, topicEnvelope } from './protocol.ts';
import type { Socket } from './socket.ts';
import type { UwsApp } from '../uws.ts';

export class WsHub {
  private uws: UwsApp | null = null;
  private readonly sockets = new Set<Socket<any>>();
  private idle: (() => void)[] = [];

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
    return this.uws.publish(topic, topicEnvelope(topic, event, encodeData(data)), false);
  }

  /** Publishes a raw message (text or binary) to a topic. */
  publishRaw(topic: string, message: string | ArrayBuffer | Uint8Array, isBinary = typeof message !== 'string'): boolean {
    assertTopic(topic);
    return this.uws !== null && this.uws.publish(topic, message, isBinary);
  }

  subscribers(topic: string): number {
    return this.uws === null ? 0 : this.uws.numSubscribers(topic);
  }

  /** Closes every socket with `code` and resolves when all are gone (or after `timeout` ms, cutting the rest). */
  async closeAll(code: number, reason: string, timeout: number): Promise<void> {
    if (this.sockets.size === 0) return;
    const gone = new Promise<void>((resolve) => this.idle.push(resolve));
    for (const s of [...this.sockets]) s.close(code, reason);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([gone.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timeout)))]);
    clearTimeout(timer);
    if (timedOut) for (const s of [...this.sockets]) s.terminate();
  }
}
