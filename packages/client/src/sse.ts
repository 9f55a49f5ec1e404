// The fallback transport (docs/realtime.md, "Fallback transport"), shaped like a WebSocket so
// that connect() drives it unchanged: one long GET read as Server-Sent Events carries server →
// client frames; client → server frames go out as POSTs to `<url>?session=<id>`, one at a
// time (so they arrive in order), each carrying every frame queued meanwhile, one per line.
// fetch() with a streamed body works in browsers and in Node.js 22+, with no dependency
// (EventSource is missing from Node.js and cannot send an Accept header of its own choosing).
// connect() loads this module with import() the first time it falls back (its own entry,
// `@tachyon/client/sse`, and its own chunk in the browser build): apps whose WebSocket gets
// through never download it. The probe that switches back up lives here for the same reason.
import type { WebSocketLike } from './api.ts';

/** ws:// → http://, wss:// → https:// (http(s) URLs stay as they are). */
export function httpUrl(url: string | URL): string {
  return String(url).replace(/^ws(s?):/i, 'http$1:');
}

/**
 * How an open SSE socket tries the WebSocket again (connect()'s `probeInterval`): every
 * `every` ms it opens `ws()`; one that opens within `wait` ms is offered to `up`, which wires
 * it as the connection (true: its onopen runs, this session closes) or declines (false: it is
 * closed, and tried again later).
 */
export interface Probe {
  every: number;
  wait: number;
  ws: () => WebSocketLike;
  up: (ws: WebSocketLike) => boolean;
  report: (e: unknown) => void;
}

interface SessionInfo {
  session: string;
  maxPost: number;
  idle: number;
}

/** The session event's fields, checked: a stream that gets them wrong fails like a WebSocket that could not open (1006). */
function sessionInfo(v: unknown): SessionInfo {
  const i = v as Partial<SessionInfo> | null;
  if (
    typeof i?.session !== 'string' ||
    !Number.isSafeInteger(i.maxPost) ||
    (i.maxPost as number) < 1 ||
    typeof i.idle !== 'number' ||
    !(i.idle >= 0 && i.idle < 2 ** 31)
  )
    throw new TypeError('@tachyon/client: malformed session event');
  return i as SessionInfo;
}

export class SseSocket implements WebSocketLike {
  readyState = 0;
  binaryType = 'arraybuffer';
  onopen: ((ev: any) => unknown) | null = null;
  onmessage: ((ev: any) => unknown) | null = null;
  onclose: ((ev: any) => unknown) | null = null;
  private readonly url: string;
  private readonly abort = new AbortController();
  private post = '';
  private maxPost = 65_537;
  private queue: string[] = [];
  private sending = false;
  private lastPost = 0;
  private pinger: ReturnType<typeof setInterval> | undefined;
  private prober: ReturnType<typeof setTimeout> | undefined;

  private readonly probe: Probe | undefined;

  constructor(url: string | URL, probe?: Probe) {
    this.url = httpUrl(url);
    this.probe = probe;
    void this.read();
  }

  /** Schedules the next WebSocket try while this session is open (none once it closes). */
  private scheduleProbe(): void {
    const o = this.probe;
    if (o && o.every > 0 && this.readyState === 1) this.prober = setTimeout(() => this.tryWebSocket(o), o.every);
  }

  private tryWebSocket(o: Probe): void {
    let p: WebSocketLike;
    try {
      p = o.ws();
    } catch (e) {
      o.report(e);
      return this.scheduleProbe();
    }
    p.binaryType = 'arraybuffer';
    const giveUp = setTimeout(() => p.close(), o.wait);
    let taken = false;
    p.onopen = () => {
      clearTimeout(giveUp);
      if (this.readyState === 1 && o.up(p)) {
        taken = true;
        p.onopen?.({}); // the client's handler now: resubscribes from the positions
        this.close(1000, '');
      } else p.close();
    };
    p.onclose = () => {
      clearTimeout(giveUp);
      if (!taken) this.scheduleProbe();
    };
  }

  private async read(): Promise<void> {
    let code = 1006;
    let reason = '';
    try {
      const res = await fetch(this.url, { headers: { accept: 'text/event-stream' }, cache: 'no-store', signal: this.abort.signal });
      if (!res.ok || res.body === null) throw new Error(`HTTP ${res.status}`);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value.includes('\r') ? value.replace(/\r\n?/g, '\n') : value;
        for (let i = buf.indexOf('\n\n'); i !== -1; i = buf.indexOf('\n\n')) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const closed = this.event(block);
          if (closed !== null) {
            code = closed.code;
            reason = closed.reason;
            this.abort.abort();
            return this.finish(code, reason);
          }
        }
      }
    } catch {
      // refused, cut or aborted: 1006 like a WebSocket that failed
    }
    this.finish(code, reason);
  }

  /** One SSE event: the session, a protocol frame, or the close frame (returned). */
  private event(block: string): { code: number; reason: string } | null {
    let name = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('data:')) data.push(line.slice(line[5] === ' ' ? 6 : 5));
      else if (line.startsWith('event:')) name = line.slice(6).trim();
      // comments (heartbeats) and unknown fields are skipped
    }
    if (data.length === 0) return null;
    const text = data.join('\n');
    if (name === 'close') {
      // A close code and reason as a WebSocket gives them, whatever the stream says (fuzz/targets/fallback-frames.mjs).
      const c = JSON.parse(text) as { code?: unknown; reason?: unknown } | null;
      const code = c?.code;
      const valid = typeof code === 'number' && Number.isInteger(code) && code >= 1000 && code <= 4999;
      return { code: valid ? code : 1005, reason: typeof c?.reason === 'string' ? c.reason : '' };
    }
    if (name === 'session') return this.opened(sessionInfo(JSON.parse(text)));
    if (this.readyState === 1) this.onmessage?.({ data: text });
    return null;
  }

  private opened(info: SessionInfo): null {
    this.post = `${this.url}${this.url.includes('?') ? '&' : '?'}session=${encodeURIComponent(info.session)}`;
    this.maxPost = info.maxPost;
    this.readyState = 1;
    this.lastPost = Date.now();
    // The server closes a session that POSTs nothing for its idleTimeout: a ping keeps it alive.
    if (info.idle > 0)
      this.pinger = setInterval(
        () => {
          if (Date.now() - this.lastPost >= info.idle / 2) this.send('{"type":"ping"}');
        },
        Math.max(info.idle / 4, 250),
      ); // 250 ms at the least, whatever idle the server says
    this.onopen?.({});
    this.scheduleProbe();
    return null;
  }

  send(data: string | ArrayBufferLike | ArrayBufferView | Blob): void {
    if (typeof data !== 'string') throw new TypeError('@tachyon/client: binary frames cannot travel over the SSE fallback transport');
    if (this.readyState !== 1) return;
    this.queue.push(data);
    this.flush();
  }

  /** One POST at a time, with every queued frame that fits in the server's maxPost. */
  private flush(): void {
    if (this.sending || this.queue.length === 0 || this.readyState !== 1) return;
    let size = this.queue[0]!.length;
    let n = 1;
    while (n < this.queue.length && size + 1 + this.queue[n]!.length <= this.maxPost) size += 1 + this.queue[n++]!.length;
    const body = this.queue.splice(0, n).join('\n');
    this.sending = true;
    this.lastPost = Date.now();
    fetch(this.post, { method: 'POST', body, headers: { 'content-type': 'text/plain;charset=UTF-8' }, signal: this.abort.signal }).then(
      (res) => {
        this.sending = false;
        void res.body?.cancel();
        // 404: the session is gone (the stream ends with it); 413: it is closed with 1009.
        if (res.ok) this.flush();
      },
      () => {
        this.sending = false;
        this.close(1006, '');
      },
    );
  }

  close(code = 1000, reason = ''): void {
    if (this.readyState >= 2) return;
    this.abort.abort(); // the server sees the stream go and closes the session
    this.finish(code, reason);
  }

  private finish(code: number, reason: string): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    clearInterval(this.pinger);
    clearTimeout(this.prober);
    this.queue = [];
    const onclose = this.onclose;
    queueMicrotask(() => onclose?.({ code, reason }));
  }
}
