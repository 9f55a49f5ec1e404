// Server-sent events (text/event-stream) over a streaming response: `res.sse()`.

/** The part of a Response an event stream writes through (no import of response.ts: no cycle). */
export interface SseTarget {
  readonly headersSent: boolean;
  readonly finished: boolean;
  write(chunk: string): boolean;
  drained(): Promise<void>;
  endStream(): void;
}

/** A server-sent events channel created by `res.sse()`. */
export class EventStream {
  private readonly res: SseTarget;
  /** @internal */
  constructor(res: SseTarget) {
    this.res = res;
  }
  /** False once the client has gone or close() was called. */
  get open(): boolean {
    return this.res.headersSent && !this.res.finished;
  }
  /** Sends one event; objects are JSON-encoded. Returns false under backpressure (await drained()). */
  send(data: unknown, options: { event?: string; id?: string } = {}): boolean {
    let out = '';
    if (options.event !== undefined) out += `event: ${singleLine('event', options.event)}\n`;
    if (options.id !== undefined) out += `id: ${singleLine('id', options.id)}\n`;
    const text = typeof data === 'string' ? data : JSON.stringify(data);
    for (const line of text.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
    return this.res.write(out + '\n');
  }
  /** A comment line: keeps proxies from timing the stream out. */
  comment(text = ''): boolean {
    return this.res.write(`: ${text.replace(/[\r\n]/g, ' ')}\n\n`);
  }
  drained(): Promise<void> {
    return this.res.drained();
  }
  close(): void {
    this.res.endStream();
  }
}

function singleLine(field: string, value: string): string {
  if (/[\r\n]/.test(value)) throw new TypeError(`SSE ${field} must not contain newlines`);
  return value;
}
