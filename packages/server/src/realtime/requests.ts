// Server → client requests (docs/protocol.md, v1.2): `socket.request(event, data)` sends
// `{"type":"request","id":…,"event":…,"data":…}` and waits for the client's
// `{"type":"reply","id":…}` frame. Ids are the socket's own (1, 2, 3…), separate from the
// refs the client picks for its requests. Each socket holds at most `limit` pending
// requests; all of them fail with CLOSED when the socket closes.
import type { Logger } from '../core/logger.ts';
import { errorFrame, readRef } from './protocol.ts';

/** Why a server → client request failed (docs/realtime.md, "Requests to the client"). */
export type SocketRequestErrorCode = 'TIMEOUT' | 'CLOSED' | 'CLIENT_ERROR' | 'NO_HANDLER' | 'TOO_MANY_REQUESTS' | 'DROPPED';

export class SocketRequestError extends Error {
  readonly code: SocketRequestErrorCode;
  /** The request's event name. */
  readonly event: string;
  constructor(code: SocketRequestErrorCode, event: string, message: string) {
    super(message);
    this.name = code === 'TIMEOUT' ? 'TimeoutError' : 'SocketRequestError';
    this.code = code;
    this.event = event;
  }
}

export interface SocketRequestOptions {
  /** Milliseconds to wait for the answer; 0 or Infinity waits until the socket closes. Default 10 000. */
  timeout?: number;
}

/** Default and bounds of the route's `maxPendingRequests` (behavior.ts). */
export const DEFAULT_MAX_PENDING = 1000;
const DEFAULT_TIMEOUT = 10_000;
/** setTimeout's largest delay: longer ones would fire at once. */
const MAX_TIMER = 2 ** 31 - 1;

/** Milliseconds to wait, or 0 for none; throws on a value that is not a duration. */
export function requestTimeout(options: SocketRequestOptions | undefined): number {
  const t = options?.timeout ?? DEFAULT_TIMEOUT;
  if (typeof t !== 'number' || Number.isNaN(t) || t < 0)
    throw new TypeError(`request timeout must be a number of milliseconds ≥ 0 (0 or Infinity: none), got ${String(t)}`);
  if (t === 0 || t === Infinity) return 0;
  if (t > MAX_TIMER) throw new TypeError(`request timeout must be at most ${MAX_TIMER} ms (or Infinity), got ${t}`);
  return t;
}

interface Pending {
  resolve(value: unknown): void;
  reject(err: SocketRequestError): void;
  event: string;
  timer: NodeJS.Timeout | undefined;
}

/** `{"type":"request",…}`: the event name was validated, `json` is the data's JSON or undefined. */
export const requestFrame = (id: number, event: string, json: string | undefined) =>
  json === undefined
    ? `{"type":"request","id":${id},"event":"${event}"}`
    : `{"type":"request","id":${id},"event":"${event}","data":${json}}`;

/** Fires a request's timeout; module-level so that arming it builds no closure. */
function expire(requests: PendingRequests, id: number, ms: number): void {
  const p = requests.take(id);
  if (p !== undefined) p.reject(new SocketRequestError('TIMEOUT', p.event, `Request "${p.event}" got no answer within ${ms} ms`));
}

/** One socket's requests awaiting an answer; created on its first request (not exported by the package). */
export class PendingRequests {
  private readonly map = new Map<number, Pending>();
  private next = 0;
  readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
  }

  get size(): number {
    return this.map.size;
  }

  /**
   * Registers a request and returns its id, or a rejected promise's error when the socket
   * already has `limit` requests pending.
   */
  open(event: string, ms: number, resolve: (v: unknown) => void, reject: (e: SocketRequestError) => void): number | SocketRequestError {
    if (this.map.size >= this.limit) {
      return new SocketRequestError(
        'TOO_MANY_REQUESTS',
        event,
        `Request "${event}" refused: ${this.limit} requests to this client are already pending (the route's maxPendingRequests)`,
      );
    }
    const id = ++this.next;
    this.map.set(id, { resolve, reject, event, timer: ms === 0 ? undefined : setTimeout(expire, ms, this, id, ms) });
    return id;
  }

  /** Removes and returns request `id` (its timer stopped), or undefined. */
  take(id: number): Pending | undefined {
    const p = this.map.get(id);
    if (p === undefined) return undefined;
    this.map.delete(id);
    clearTimeout(p.timer);
    return p;
  }

  /** The socket closed: every pending request fails with CLOSED. */
  closeAll(): void {
    if (this.map.size === 0) return;
    const all = [...this.map.values()];
    this.map.clear();
    for (const p of all) {
      clearTimeout(p.timer);
      p.reject(new SocketRequestError('CLOSED', p.event, `The socket closed before the client answered "${p.event}"`));
    }
  }
}

/** Longest client error message kept (the rest is cut): the message goes into server logs. */
const MAX_MESSAGE = 1024;

/**
 * A client `reply` frame (control.ts). A malformed frame (no valid `id`, an `error` that is
 * not an object) gets a BAD_FRAME error; a well-formed one for an id that is not pending
 * (answered already, timed out, never asked) is ignored with a debug line: late answers
 * after a timeout are normal. Returns the error frame to send, or null.
 */
export function settleReply(requests: PendingRequests | null, frame: Record<string, unknown>, log: Logger): string | null {
  const id = readRef(frame.id);
  const error = frame.error;
  if (id === undefined) return errorFrame(undefined, 'BAD_FRAME', 'reply needs an integer id');
  if (error !== undefined && (typeof error !== 'object' || error === null))
    return errorFrame(undefined, 'BAD_FRAME', 'reply error must be an object');
  const p = requests?.take(id);
  if (p === undefined) {
    log.debug({ id }, 'websocket: reply for no pending request');
    return null;
  }
  if (error === undefined) p.resolve(frame.data);
  else {
    const { code, message } = error as { code?: unknown; message?: unknown };
    const text = typeof message === 'string' ? message.slice(0, MAX_MESSAGE) : 'the client handler failed';
    if (code === 'NO_HANDLER') p.reject(new SocketRequestError('NO_HANDLER', p.event, `The client has no handler for "${p.event}"`));
    else p.reject(new SocketRequestError('CLIENT_ERROR', p.event, text));
  }
  return null;
}
