// The fallback transport of a `fallback: true` route (docs/realtime.md, "Fallback transport"):
//
//   GET  <path>  Accept: text/event-stream   → the route's upgrade checks and hook, then an SSE
//                                              stream: `event: session` first, frames as `data:`
//   POST <path>?session=<id>  text/plain      → one or more protocol frames, one per line → 204
//
// Each session is an SseConnection driven by the route's compiled WebSocket behavior, so every
// feature (events, replies, requests, topics, history, presence, rate limits, close codes)
// runs the same code as on a WebSocket. Sessions live in this process only: the stream and its
// POSTs must reach the same process (docs/realtime.md, "Behind a load balancer").
import { randomBytes } from 'node:crypto';
import type { UwsHandler, UwsResponse, UwsWebSocketBehavior } from '../../uws/index.ts';
import type { Logger } from '../../core/logger.ts';
import { CLOSE_GOING_AWAY, CLOSE_TOO_BIG } from '../protocol.ts';
import type { UpgradeData } from '../upgrade.ts';
import { SseConnection, type SseContext } from './connection.ts';
import type { SseTopics } from './topics.ts';
import { warnBadInput } from '../../core/throttled-log.ts';

export interface FallbackHandlers {
  /** GET <path>: opens a session when the request asks for `text/event-stream`, else yields to the other routes. */
  get: UwsHandler;
  /** POST <path>?session=<id>: frames for a session. */
  post: UwsHandler;
}

export interface FallbackParts {
  behavior: UwsWebSocketBehavior;
  topics: SseTopics;
  publishWs(topic: string, message: string): boolean;
  maxBackpressure: number;
  maxPayloadLength: number;
  /** Seconds without a POST before a session is closed (0: never). */
  idleTimeout: number;
  log: Logger;
}

/**
 * An SSE stream and its POSTs come on different connections, and cluster() hands each
 * connection to any worker (acceptor round-robin, or the kernel with reusePort): a POST would
 * miss its session. Refused at start until sessions are resolved across workers.
 */
export function refuseFallbackInCluster(routes: readonly { pattern: { path: string }; behavior: { fallback?: unknown } }[]): void {
  for (const r of routes) {
    if (r.behavior.fallback === undefined || r.behavior.fallback === false) continue;
    throw new Error(
      `ws ${r.pattern.path}: fallback is not supported under cluster() with more than one worker yet: an SSE stream and its POSTs arrive on different connections, which may reach different workers. Run the route in one process per port (behind a load balancer with sticky sessions), or without fallback (docs/realtime.md, "Fallback transport")`,
    );
  }
}

const SESSION = /(?:^|&)session=([A-Za-z0-9_-]{1,64})(?:&|$)/;

/** A protocol error as a POST's body (404, 413): the client reads the same error frame as on the stream. */
const errorBody = (code: string, message: string) => JSON.stringify({ type: 'error', code, message });

/** The sessions of one route, and its two HTTP handlers (built once, at startup). */
export class FallbackRoute {
  private readonly sessions = new Map<string, SseConnection>();
  private readonly ctx: SseContext;
  private readonly parts: FallbackParts;
  private readonly heartbeat: number;
  /** Heartbeats and idle collection: one timer per route, running only while it has sessions. */
  private timer: NodeJS.Timeout | null = null;
  /** The largest POST body: one frame of maxPayloadLength and its line break, or several smaller. */
  readonly maxPost: number;

  constructor(parts: FallbackParts, heartbeat: number) {
    this.parts = parts;
    this.heartbeat = heartbeat;
    this.maxPost = parts.maxPayloadLength + 1;
    this.ctx = {
      behavior: parts.behavior,
      topics: parts.topics,
      publishWs: parts.publishWs,
      maxBackpressure: parts.maxBackpressure,
      forget: (c) => {
        this.sessions.delete(c.id);
        if (this.sessions.size === 0 && this.timer !== null) {
          clearInterval(this.timer);
          this.timer = null;
        }
      },
    };
  }

  /** The route's upgrade accepted a GET: the stream starts, then the socket opens like a WebSocket's. */
  readonly open = (ures: UwsResponse, data: UpgradeData, async: boolean): void => {
    const id = randomBytes(18).toString('base64url'); // 144 random bits: the session's only credential
    const c = new SseConnection(id, ures, data.socket, this.ctx);
    ures.onAborted(() => c.aborted());
    const idle = this.parts.idleTimeout * 1000;
    const start = () => {
      ures.writeStatus('200 OK');
      ures.writeHeader('content-type', 'text/event-stream; charset=utf-8');
      ures.writeHeader('cache-control', 'no-cache, no-transform');
      ures.writeHeader('x-accel-buffering', 'no'); // nginx: pass each event on at once
      ures.write(`event: session\ndata: ${JSON.stringify({ session: id, maxPost: this.maxPost, idle })}\n\n`);
    };
    if (async) ures.cork(start);
    else start();
    this.sessions.set(id, c);
    if (this.timer === null) this.timer = setInterval(this.tick, this.heartbeat * 1000);
    this.parts.behavior.open?.(c);
  };

  /** Heartbeat comments on every stream; sessions that stopped POSTing (even pings) past idleTimeout are closed. */
  private readonly tick = (): void => {
    const idle = this.parts.idleTimeout * 1000;
    const now = Date.now();
    for (const c of [...this.sessions.values()]) {
      if (idle > 0 && now - c.lastSeen > idle) {
        this.parts.log.debug({ ip: c.socket.ip }, 'fallback session idle: closing');
        c.end(CLOSE_GOING_AWAY, 'Idle timeout');
      } else c.write(':\n\n');
    }
  };

  /** The GET handler: `upgrade` is the route's upgrade compiled with `open` as its stream. */
  get(upgrade: NonNullable<UwsWebSocketBehavior['upgrade']>): UwsHandler {
    return (ures, ureq) => {
      if (!ureq.getHeader('accept').includes('text/event-stream')) {
        ureq.setYield(true); // an ordinary GET: the app's routes (or its 404) answer it
        return;
      }
      upgrade(ures, ureq, undefined as unknown as object);
    };
  }

  readonly post: UwsHandler = (ures, ureq) => {
    const m = SESSION.exec(ureq.getQuery() ?? '');
    if (m === null) {
      ureq.setYield(true); // no session named: an ordinary POST, for the app's routes (or its 404)
      return;
    }
    const c = this.sessions.get(m[1]!);
    if (c === undefined) {
      ures.writeStatus('404 Not Found').writeHeader('content-type', 'application/json');
      ures.end(errorBody('UNKNOWN_SESSION', 'No such session: open a new one'));
      return;
    }
    const max = this.maxPost;
    const declared = Number(ureq.getHeader('content-length') || '0');
    if (declared > max) return this.tooLarge(ures, c, false);
    let done = false;
    ures.onAborted(() => {
      done = true;
    });
    const chunks: Buffer[] = [];
    let size = 0;
    ures.onData((ab, last) => {
      if (done) return;
      size += ab.byteLength;
      if (size > max) {
        done = true;
        return this.tooLarge(ures, c, true);
      }
      chunks.push(Buffer.from(ab.slice(0))); // the chunk dies with this callback
      if (!last) return;
      done = true;
      this.frames(c, Buffer.concat(chunks));
      ures.cork(() => ures.writeStatus('204 No Content').endWithoutBody());
    });
  };

  /** A POST over maxPost: 413, and the session closes with 1009 like a WebSocket sent a frame too big. */
  private tooLarge(ures: UwsResponse, c: SseConnection, corked: boolean): void {
    warnBadInput(this.parts.log, { ip: c.socket.ip, limit: this.maxPost }, 'fallback POST too large: 413, closing with 1009');
    const answer = () => {
      ures.writeStatus('413 Payload Too Large').writeHeader('content-type', 'application/json');
      ures.end(errorBody('TOO_LARGE', `At most ${this.maxPost} bytes per POST`), true);
    };
    if (corked) ures.cork(answer);
    else answer();
    c.socket.close(CLOSE_TOO_BIG, 'Message too big');
  }

  /** Each line of the body is one frame, through the route's message handler (limits, rate limits, control frames). */
  private frames(c: SseConnection, body: Buffer): void {
    c.lastSeen = Date.now();
    const message = this.parts.behavior.message!;
    let start = 0;
    while (start < body.length && c.open) {
      let end = body.indexOf(10, start);
      if (end === -1) end = body.length;
      if (end > start) {
        const line = body.subarray(start, end);
        message(c, line.buffer.slice(line.byteOffset, line.byteOffset + line.length) as ArrayBuffer, false);
      }
      start = end + 1;
    }
  }
}
