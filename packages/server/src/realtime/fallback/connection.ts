// One session of the fallback transport, shaped like a uWS WebSocket (UwsWebSocket) so that
// the route's compiled behavior (route.ts: open, message, dropped, close) and the Socket class
// drive it unchanged. Server → client frames are Server-Sent Events on one long GET response;
// client → server frames arrive as POSTs (fallback/route.ts). Like uWS, the object carries the
// socket's user data (UpgradeData) as its own fields.
import type { RecognizedString, UwsResponse, UwsWebSocket, UwsWebSocketBehavior } from '../../uws/index.ts';
import type { Socket } from '../socket.ts';
import type { MessageBudget } from '../rate-limit.ts';
import type { SseTopics } from './topics.ts';

/** What a session needs from its route and the hub. */
export interface SseContext {
  behavior: UwsWebSocketBehavior;
  topics: SseTopics;
  /** Publishes to this process's WebSocket subscribers (uWS), for a session's own publish. */
  publishWs(topic: string, message: string): boolean;
  maxBackpressure: number;
  /** The session is over: forget its id. */
  forget(c: SseConnection): void;
}

const encoder = new TextEncoder();
const EMPTY = new ArrayBuffer(0);

/** An SSE event carrying one protocol frame; a frame with line breaks takes one `data:` line per line (the client joins them with \n). */
export function sseEvent(frame: string): string {
  return frame.includes('\n') || frame.includes('\r') ? `data: ${frame.split(/\r\n|\r|\n/).join('\ndata: ')}\n\n` : `data: ${frame}\n\n`;
}

export class SseConnection implements UwsWebSocket {
  // UpgradeData (upgrade.ts), read by route.ts as uWS user data.
  socket: Socket<any>;
  deferOpen = false;
  budget: MessageBudget | null = null;

  readonly id: string;
  /** Last time a POST arrived (idle collection, fallback/route.ts). */
  lastSeen = Date.now();
  /** The GET response while the stream is open; null once it ended or was aborted. */
  private res: UwsResponse | null;
  private readonly ctx: SseContext;
  private readonly subscribed = new Set<string>();
  /** Bytes written since the stream last reported itself drained. */
  private backlog = 0;
  private closedOnce = false;

  constructor(id: string, res: UwsResponse, socket: Socket<any>, ctx: SseContext) {
    this.id = id;
    this.res = res;
    this.socket = socket;
    this.ctx = ctx;
    res.onWritable(() => {
      this.backlog = 0;
      const drain = ctx.behavior.drain;
      if (drain !== undefined) drain(this);
      return true;
    });
  }

  /** Writes raw SSE text. 1: written, 0: queued (backpressure), 2: dropped (over maxBackpressure). */
  write(text: string): number {
    const res = this.res;
    if (res === null) return 2;
    if (this.backlog > this.ctx.maxBackpressure) {
      this.ctx.behavior.dropped?.(this, EMPTY, false);
      return 2;
    }
    let ok = false;
    res.cork(() => {
      ok = res.write(text);
    });
    if (ok) this.backlog = 0;
    else this.backlog += text.length;
    return ok ? 1 : 0;
  }

  send(message: RecognizedString, isBinary?: boolean): number {
    if (isBinary === true || typeof message !== 'string') return 2; // SSE carries text only (docs/realtime.md)
    return this.write(sseEvent(message));
  }

  /** A close frame (the last event), then the end of the stream. */
  end(code = 1000, shortMessage?: RecognizedString): void {
    if (this.res === null) return;
    const reason =
      typeof shortMessage === 'string'
        ? shortMessage
        : shortMessage === undefined
          ? ''
          : Buffer.from(shortMessage as Uint8Array).toString();
    const res = this.res;
    this.res = null;
    res.cork(() => {
      res.write(`event: close\ndata: ${JSON.stringify({ code, reason })}\n\n`);
      res.end();
    });
    this.closed(code, reason);
  }

  /** Cuts the stream without a close event. */
  close(): void {
    const res = this.res;
    if (res === null) return;
    this.res = null;
    res.close();
    this.closed(1006, '');
  }

  /** The client went away (the GET was aborted). */
  aborted(): void {
    if (this.res === null) return;
    this.res = null;
    this.closed(1006, '');
  }

  private closed(code: number, reason: string): void {
    if (this.closedOnce) return;
    this.closedOnce = true;
    this.ctx.forget(this);
    // The socket is detached (and the hub told) by the route's close; the topics go after,
    // since getTopics() answers until then like uWS's.
    this.ctx.behavior.close?.(this, code, encoder.encode(reason).buffer as ArrayBuffer);
    for (const topic of this.subscribed) this.ctx.topics.remove(this, topic);
    this.subscribed.clear();
  }

  get open(): boolean {
    return this.res !== null;
  }

  getBufferedAmount(): number {
    return this.backlog;
  }

  subscribe(topic: RecognizedString): boolean {
    const t = String(topic);
    if (!this.subscribed.has(t)) {
      this.subscribed.add(t);
      this.ctx.topics.add(this, t);
    }
    return true;
  }

  unsubscribe(topic: RecognizedString): boolean {
    const t = String(topic);
    if (!this.subscribed.delete(t)) return false;
    this.ctx.topics.remove(this, t);
    return true;
  }

  isSubscribed(topic: RecognizedString): boolean {
    return this.subscribed.has(String(topic));
  }

  getTopics(): string[] {
    return [...this.subscribed];
  }

  /** Publishes to the WebSocket subscribers (uWS); publishExcept (socket.ts) adds the other sessions. */
  publish(topic: RecognizedString, message: RecognizedString, isBinary?: boolean): boolean {
    if (isBinary === true || typeof message !== 'string') return false;
    // Sessions get it from publishExcept (socket.ts), which skips this one.
    this.ctx.publishWs(String(topic), message);
    return true; // never false: that would make publishExcept publish to everyone again
  }

  cork(cb: () => void): UwsWebSocket {
    const res = this.res;
    if (res === null) cb();
    else res.cork(cb);
    return this;
  }

  getUserData(): Record<string, unknown> {
    return this as unknown as Record<string, unknown>;
  }
}
