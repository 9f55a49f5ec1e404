// The public API of @tachyon/client: connection status, errors, options, and the `Live`
// handle `connect()` returns (index.ts implements it). Types only, but for ClientError.
import type { PresenceChange, PresenceMember } from './presence.ts';

/** Connection state. `reconnecting` covers both the backoff wait and the retry itself. */
export type Status = 'connecting' | 'open' | 'reconnecting' | 'closed';

/** Details passed to `onStatus` listeners. */
export interface StatusInfo {
  /** Close code of the connection that just ended (reconnecting, closed). */
  code?: number;
  /** Close reason of the connection that just ended. */
  reason?: string;
  /** Milliseconds until the next connection attempt (reconnecting). */
  delay?: number;
  /** Number of consecutive failed attempts so far, this one included (reconnecting). */
  attempt?: number;
}

/** One validation issue of a `VALIDATION` error reply. */
export interface Issue {
  path: (string | number)[];
  message: string;
}

/**
 * Every error this client produces or relays. `code` is the server's error code
 * (`BAD_FRAME`, `UNKNOWN_EVENT`, `VALIDATION`, `HANDLER_ERROR`, `RATE_LIMITED`, ...) or
 * one of the client's own: `TIMEOUT`, `QUEUE_FULL`, `CLOSED`, `CONNECTION_LOST`, `DENIED`.
 */
export class ClientError extends Error {
  declare code: string;
  /** Validation issues, for `VALIDATION` errors. */
  declare issues?: Issue[];
  /** The event name of the request that failed. */
  declare event?: string;
  /** The topic of a `DENIED` subscription. */
  declare topic?: string;
  constructor(code: string, message: string, extra?: { issues?: Issue[]; event?: string; topic?: string }) {
    super(message);
    this.name = code === 'TIMEOUT' ? 'TimeoutError' : 'ClientError';
    this.code = code;
    Object.assign(this, extra);
  }
}

/** The parts of the WebSocket API this client uses (the browser's, Node's, or the `ws` package's). */
export interface WebSocketLike {
  readonly readyState: number;
  binaryType: string;
  send(data: string | ArrayBufferLike | ArrayBufferView | Blob): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: any) => unknown) | null;
  onmessage: ((ev: any) => unknown) | null;
  onclose: ((ev: any) => unknown) | null;
}

export type WebSocketConstructor = new (url: string | URL, protocols?: string | string[]) => WebSocketLike;

export interface ClientOptions {
  /** WebSocket implementation; defaults to `globalThis.WebSocket` (browsers, Node >= 22). */
  WebSocket?: WebSocketConstructor;
  /**
   * Transports in the order they are tried (docs/realtime.md, "Fallback transport"). With
   * `['websocket', 'sse']`, a WebSocket that fails before it opens, or does not open within
   * `fallbackTimeout`, is replaced by Server-Sent Events + POSTs (the route needs
   * `fallback: true`); every `probeInterval` ms it tries the WebSocket again and switches
   * back up when one opens. Default `['websocket']`.
   */
  transports?: readonly ('websocket' | 'sse')[];
  /** Milliseconds a WebSocket may take to open before the next transport is tried (default 5000). */
  fallbackTimeout?: number;
  /** On SSE: milliseconds between tries of the WebSocket, to switch back up; 0 never tries (default 60 000). */
  probeInterval?: number;
  /** Subprotocols passed to the WebSocket constructor. */
  protocols?: string | string[];
  /** Backoff: cap of the first retry delay, in ms (default 250). */
  minDelay?: number;
  /** Backoff: largest retry delay, in ms (default 10 000). */
  maxDelay?: number;
  /** Backoff: growth factor per failed attempt (default 2). */
  factor?: number;
  /** Consecutive failed attempts after which the client gives up and closes (default Infinity). */
  maxRetries?: number;
  /** Frames (requests, emits, raw sends) kept while offline (default 100). */
  maxQueue?: number;
  /** Default request timeout in ms, queue time included; 0 or Infinity disables it (default 10 000). */
  timeout?: number;
  /** Receives listener exceptions, error replies nobody waits for, and denied subscriptions without an `onDenied` hook. Default: console.error. */
  onError?: (error: unknown) => void;
}

/** What a client → server event declares: the data it sends and the reply it gets. */
export interface RequestSpec {
  data?: unknown;
  reply?: unknown;
}

/** Server → client events: event name → data type. */
export type EventMap = Record<string, unknown>;
/** Client → server events: event name → `{ data; reply }`. */
export type RequestMap = Record<string, RequestSpec>;
/** Server → client requests (`ws.request()` on the server, answered by `handle`): event name → `{ data; reply }`. */
export type HandlerMap = Record<string, RequestSpec>;

type Name<M> = keyof M & string;
/** Data type of a client → server event (`undefined` when the spec declares none). */
export type DataOf<S> = 'data' extends keyof S ? S[Extract<'data', keyof S>] : undefined;
/** Reply type of a client → server event (`unknown` when the spec declares none). */
export type ReplyOf<S> = S extends { reply?: infer T } ? T : unknown;
type DataArg<D> = undefined extends D ? [data?: D] : [data: D];

/** What a `handle` handler may return: the reply, or a promise of it. */
export type HandlerResult<S> = ReplyOf<S> | PromiseLike<ReplyOf<S>>;

/** A topic listener: `(event, data)`, narrowed together, so `if (event === 'chat') data.text` type-checks. */
export type TopicListener<E> = (...args: { [K in Name<E>]: [event: K, data: E[K]] }[Name<E>]) => void;

export interface RequestOptions {
  /** Overrides the client's `timeout` for this request (ms; 0 or Infinity disables it). */
  timeout?: number;
  /**
   * Times the request is sent again when the connection is lost before its reply (default 0:
   * it rejects with `CONNECTION_LOST`). The frame carries an idempotency key, and the server
   * runs the handler once per key within its window and answers a resend with the first
   * outcome (docs/realtime.md, "Retried requests"). `timeout` still bounds the whole wait.
   */
  retries?: number;
}

export interface SubscribeOptions {
  /** Called when the server denies the subscription (the topic is then dropped). */
  onDenied?: (error: ClientError) => void;
  /**
   * Called each time the server confirms the subscription: the first time, and after every
   * reconnect. On a topic with history (docs/history.md), `recovered: false` after a
   * reconnect means messages were lost: refetch the state the topic carries.
   */
  onSubscribed?: (info: SubscribeInfo) => void;
  /** On a topic with history, a fresh subscribe first gets the last `last` messages kept. */
  last?: number;
}

/** What `onSubscribed` gets. */
export interface SubscribeInfo {
  /** True when this subscribe resumed from a known position (a resubscribe after a reconnect, on a history topic). */
  recovering: boolean;
  /** True when every message missed since that position was replayed, in order, before this call. */
  recovered: boolean;
  /** The topic's position now (history topics only). */
  offset?: number;
  epoch?: string;
}

export type Unsubscribe = () => void;

export interface Live<E = EventMap, R = RequestMap, H = HandlerMap> {
  /** Current connection state. */
  readonly status: Status;
  /** Resolves on the first successful open; rejects if the client closes for good before. */
  readonly ready: Promise<void>;
  /** Every event published on `topic`. Subscribes (once per topic) and resubscribes after reconnects. */
  subscribe(topic: string, listener: TopicListener<E>, options?: SubscribeOptions): Unsubscribe;
  /** One event published on `topic`. */
  on<K extends Name<E>>(topic: string, event: K, listener: (data: E[K]) => void, options?: SubscribeOptions): Unsubscribe;
  /** One event sent directly to this socket (no topic). */
  onEvent<K extends Name<E>>(event: K, listener: (data: E[K]) => void): Unsubscribe;
  /**
   * Sends an event and waits for its reply. Queued while offline. (`C` defaults to the
   * event's contract once `K` is known: written as `R[K]` inside the parameters, it was read for
   * every event while `K` was still being inferred.)
   */
  request<K extends Name<R>, C = R[K]>(event: K, ...args: [...DataArg<DataOf<C>>, options?: RequestOptions]): Promise<ReplyOf<C>>;
  /**
   * Answers the server's requests for `event` (`ws.request(event, data)` on the server) with
   * what `handler` returns or resolves to; a throw or rejection answers `CLIENT_ERROR` with
   * its message, and an event without a handler answers `NO_HANDLER`. One handler per event:
   * a later one replaces it. Returns the function that removes it.
   */
  handle<K extends Name<H>>(event: K, handler: (data: DataOf<H[K]>) => HandlerResult<H[K]>): Unsubscribe;
  /** Sends an event without waiting for (or asking for) a reply. Queued while offline; false when dropped. */
  emit<K extends Name<R>>(event: K, ...args: DataArg<DataOf<R[K]>>): boolean;
  /** Sends a raw frame to the server's `message` handler. Queued while offline; false when dropped. */
  sendRaw(data: string | ArrayBufferLike | ArrayBufferView | Blob): boolean;
  /** Frames that are not protocol frames: binary (ArrayBuffer) and other text (string). */
  onMessage(listener: (data: string | ArrayBuffer) => void): Unsubscribe;
  /** Status changes, and each scheduled retry while reconnecting. */
  onStatus(listener: (status: Status, info: StatusInfo) => void): Unsubscribe;
  /** Application-level ping; resolves with the round-trip time in ms. Also a barrier: every earlier frame has been handled. */
  ping(options?: RequestOptions): Promise<number>;
  /** Who is on a presence topic (docs/presence.md). Rejects with `DENIED` when the server's `subscribe` hook refuses the topic, `NO_PRESENCE` when it has no presence. */
  presence<D = unknown>(topic: string, options?: RequestOptions): Promise<PresenceMember<D>[]>;
  /** Join and leave events of a presence topic declared with `events: true`. Subscribes like `subscribe()`. */
  onPresence<D = unknown>(topic: string, listener: (change: PresenceChange<D>) => void, options?: SubscribeOptions): Unsubscribe;
  /** Closes for good: no reconnect, pending requests reject with `CLOSED`. */
  close(): void;
}
