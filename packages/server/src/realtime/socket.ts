// One connected WebSocket as the app sees it. Every method is a harmless no-op once the
// socket has closed: the uWS object is never touched after its close callback.
import { assertEventName, assertTopic, directEnvelope, encodeData, topicEnvelope } from './protocol.ts';
import type { UwsWebSocket } from '../uws/index.ts';
import type { WsStats } from './stats.ts';
import type { HistoryOptions } from './history/options.ts';
import type { HistoryRequest } from './history/store.ts';
import { positionFrame } from './history/envelope.ts';
import { PendingRequests, SocketRequestError, requestFrame, requestTimeout, settleReply, type SocketRequestOptions } from './requests.ts';
import type { Logger } from '../core/logger.ts';
import type { SseTopics } from './fallback/topics.ts';
import type { PublishArgs } from './contract.ts';
import type { BusMeta } from './bus/index.ts';

export type SendResult = 'sent' | 'backpressure' | 'dropped' | 'closed';
const RESULT: SendResult[] = ['backpressure', 'sent', 'dropped'];

/** What a socket needs from the app's hub (hub.ts): local publishes and the bus. @internal */
export interface SocketHub {
  /** True when a bus other than the in-process one carries publishes to other processes. */
  readonly distributed: boolean;
  /** True when sockets keep their set of topics: a bus (for interest), or the subscriber index (subscriber-index.ts). */
  readonly tracksTopics: boolean;
  /** Publishes to this process's subscribers only. */
  publishLocal(topic: string, message: string): boolean;
  /** A socket published (already delivered locally): the bus carries it further, with the onPublish hooks' metadata. */
  socketPublished(topic: string, message: string, isBinary: boolean, meta?: BusMeta): void;
  /** The app's onPublish hooks: when there are any, `publishing` runs them (publish-hooks.ts). */
  readonly publishHooks: readonly unknown[];
  publishing(topic: string, event: string, from: Socket<any>, volatile: boolean): BusMeta | undefined;
  subscribed(s: Socket<any>, topic: string): void;
  unsubscribed(s: Socket<any>, topic: string): void;
  /** True once a topic declared `validate: true`: publishes then pass checkPublish (topics/validate.ts). */
  readonly validating: boolean;
  /** Throws when `data` does not fit the event's schema on a validated topic. */
  checkPublish(topic: string, event: string, data: unknown): void;
  /** History options of `topic`, or null (hub.ts). */
  historyOf(topic: string): Readonly<HistoryOptions> | null;
  /** A publish on a history topic: positioned by its store, then delivered except to `from` (the bus carries `meta`). */
  publishHistory(
    topic: string,
    event: string,
    json: string | undefined,
    h: Readonly<HistoryOptions>,
    from: Socket<any> | null,
    meta?: BusMeta,
  ): boolean;
  /** A subscribe the route allowed on a history topic: replay, subscription, answer. */
  subscribeHistory(
    s: Socket<any>,
    topic: string,
    h: Readonly<HistoryOptions>,
    request: HistoryRequest | null,
    ref: number | undefined,
    async: boolean,
  ): void;
  /** Who is on presence topics (docs/presence.md); null while no topic has presence. */
  readonly presence: SocketPresence | null;
  /** Topic subscribers on the fallback transport (fallback/topics.ts), or null when no route has one. */
  readonly sse: SseTopics | null;
}

/**
 * What a socket tells presence (presence/tracker.ts implements it). Declared here, not
 * imported: presence/ knows sockets, so sockets know presence only by this interface.
 */
export interface SocketPresence {
  subscribed(socket: Socket<any>, topic: string): void;
  unsubscribed(socket: Socket<any>, topic: string): void;
  /** Whether `topic` has presence (non-null) and who is on it: the `presence` frame (presence/read.ts). */
  options(topic: string): object | null;
  members(topic: string): readonly { readonly id: string; readonly data?: unknown }[];
}

/** Route-level hooks a socket calls: the slow-consumer policy, and the app's publish batching. @internal */
export interface SocketPolicy {
  tooSlow(socket: Socket<any>): void;
  /** Sends the app's coalesced envelopes for `topic` now (no-op without coalescing). */
  flushTopic(topic: string): void;
  hub: SocketHub;
  /** Counters for metrics(), or null. */
  stats: WsStats | null;
  /** The route's maxPendingRequests: server → client requests awaiting an answer, per socket. */
  maxPendingRequests: number;
  /** The route's path pattern (`socket.route`). */
  route: string;
}

export interface SendOptions {
  /**
   * Drop the message instead of queueing it when the socket is under backpressure (bytes
   * already waiting in its send buffer): for cursor positions, typing indicators…
   */
  volatile?: boolean;
}

/** Socket ids: unique within the process, never reused. */
let lastId = 0;

/** A socket; `Topics` are the app's typed topics (`app.topic` with `events`), which type `publish`. */
export class Socket<Data = unknown, Topics = {}> {
  /** A number unique to this socket within this process (app.requestAll names sockets "<worker>:<id>" with it). */
  readonly id: number;
  /** What the route's `upgrade` returned. */
  readonly data: Data;
  /** Client address (honours trustProxy) when the socket connected. */
  readonly ip: string;
  /** Set on open, cleared by uWS's close callback: after that the object must not be touched. @internal */
  _ws: UwsWebSocket | null = null;
  /** close() was called: no more sends, the closing handshake is under way. @internal */
  _closing = false;
  /** @internal */ _policy: SocketPolicy;
  private subscriptions = 0;
  /** The topics subscribed to, kept only when a bus or the subscriber index needs them at close (see detachSocket). @internal */
  _tracked: Set<string> | null = null;
  /** Server → client requests awaiting an answer; created by the first request(). @internal */
  _requests: PendingRequests | null = null;

  /** @internal */
  constructor(data: Data, ip: string, policy: SocketPolicy) {
    this.id = ++lastId;
    this.data = data;
    this.ip = ip;
    this._policy = policy;
  }

  /**
   * The pattern of the WebSocket route the socket connected to, e.g. `/rooms/:id` (as
   * `req.route` for HTTP): a low-cardinality label for logs, metrics and traces. Read from the
   * route, so it costs a socket nothing.
   */
  get route(): string {
    return this._policy.route;
  }

  /** True once close() was called or the connection is gone. */
  get closed(): boolean {
    return this._ws === null || this._closing;
  }

  /** The uWS socket while it may be used. */
  private live(): UwsWebSocket | null {
    return this._closing ? null : this._ws;
  }

  /** Bytes queued in uWS for this socket (backpressure). */
  get bufferedAmount(): number {
    return this._ws === null ? 0 : this._ws.getBufferedAmount();
  }

  /**
   * Sends `{"event":…,"data":…}` to this socket only. With `{ volatile: true }` the message
   * is dropped (`'dropped'`, nothing queued) while the socket has bytes waiting to be sent.
   */
  send(event: string, data?: unknown, options?: SendOptions): SendResult {
    assertEventName(event);
    const message = directEnvelope(event, encodeData(data));
    return options?.volatile === true ? sendVolatile(this, message, true) : this._send(message, false);
  }

  /**
   * Asks the client (its `live.handle(event, fn)`) and resolves with its answer. Rejects with
   * a SocketRequestError: TIMEOUT, CLOSED (closed before the answer), CLIENT_ERROR (the
   * client's handler failed: its message), NO_HANDLER, TOO_MANY_REQUESTS (the route's
   * maxPendingRequests are pending) or DROPPED (the frame was over maxBackpressure).
   * A bad event name or data that is not JSON throws, like send().
   */
  request<Reply = unknown>(event: string, data?: unknown, options?: SocketRequestOptions): Promise<Reply> {
    assertEventName(event);
    return requestEncoded<Reply>(this, event, encodeData(data), requestTimeout(options));
  }

  /** Server → client requests awaiting an answer. */
  get pendingRequests(): number {
    return this._requests === null ? 0 : this._requests.size;
  }

  /** Sends a raw frame (text for strings, binary for bytes unless `isBinary` says otherwise). */
  sendRaw(message: string | ArrayBuffer | Uint8Array, isBinary = typeof message !== 'string'): SendResult {
    return this._send(message, isBinary);
  }

  private _send(message: string | ArrayBuffer | Uint8Array, isBinary: boolean): SendResult {
    const ws = this.live();
    if (ws === null) return 'closed';
    const stats = this._policy.stats;
    if (stats !== null) stats.messagesOut++;
    return RESULT[ws.send(message, isBinary)]!; // drops also reach the route's `dropped` hook
  }

  /** Subscribes this socket to a topic (server side: reserved `__` topics allowed). */
  subscribe(topic: string): boolean {
    assertTopic(topic);
    const ws = this.live();
    if (ws === null) return false;
    this._policy.flushTopic(topic); // what was published before this call is not for us
    if (ws.isSubscribed(topic)) return ws.subscribe(topic);
    this.subscriptions++;
    const ok = ws.subscribe(topic);
    if (this._policy.hub.tracksTopics) {
      (this._tracked ??= new Set()).add(topic);
      this._policy.hub.subscribed(this, topic);
    }
    const presence = this._policy.hub.presence;
    if (presence !== null) presence.subscribed(this, topic);
    return ok;
  }

  unsubscribe(topic: string): boolean {
    const ws = this.live();
    if (ws === null) return false;
    this._policy.flushTopic(topic); // what was published before this call still is
    if (!ws.isSubscribed(topic)) return ws.unsubscribe(topic);
    this.subscriptions--;
    const ok = ws.unsubscribe(topic);
    if (this._policy.hub.tracksTopics) {
      this._tracked?.delete(topic);
      this._policy.hub.unsubscribed(this, topic);
    }
    const presence = this._policy.hub.presence;
    if (presence !== null) presence.unsubscribed(this, topic);
    return ok;
  }

  /** How many topics this socket is subscribed to (counted, not listed: no allocation). */
  get subscriptionCount(): number {
    return this.subscriptions;
  }

  isSubscribed(topic: string): boolean {
    const ws = this.live();
    return ws?.isSubscribed(topic) ?? false;
  }

  get topics(): string[] {
    const ws = this.live();
    return ws === null ? [] : ws.getTopics();
  }

  /**
   * Publishes to a topic's subscribers except this socket. On a topic declared with `events`
   * (app.topic) the event and its data are type-checked, and validated when it has `validate`.
   */
  publish<T extends string>(topic: T, ...args: PublishArgs<Topics, T>): boolean;
  publish(topic: string, event: string, data?: unknown): boolean {
    assertTopic(topic);
    assertEventName(event);
    const ws = this.live();
    if (ws === null) return false;
    const policy = this._policy;
    const hub = policy.hub;
    if (hub.validating) hub.checkPublish(topic, event, data);
    const h = hub.historyOf(topic);
    const meta = hub.publishHooks.length === 0 ? undefined : hub.publishing(topic, event, this, false);
    if (h !== null) return hub.publishHistory(topic, event, encodeData(data), h, this, meta);
    policy.flushTopic(topic); // keeps the topic's order when the app coalesces
    if (policy.stats !== null) policy.stats.publishes++;
    const envelope = topicEnvelope(topic, event, encodeData(data));
    const sent = publishExcept(this, topic, envelope);
    if (hub.distributed) hub.socketPublished(topic, envelope, false, meta);
    return sent;
  }

  /** Closes with a code and reason (a close frame; the client sees them). */
  close(code = 1000, reason = ''): void {
    const ws = this.live();
    if (ws === null) return;
    this._closing = true;
    ws.end(code, reason);
  }

  /** Cuts the connection without a close frame. */
  terminate(): void {
    const ws = this._ws;
    if (ws === null) return;
    this._closing = true;
    ws.close();
  }

  /** Batches every send inside `fn` into as few writes as possible. */
  cork(fn: () => void): void {
    const ws = this.live();
    if (ws !== null) ws.cork(fn);
  }
}

// The socket's life, driven by its route (route.ts) and the hub: module functions, so that the
// `_` state above stays this module's own.

/** uWS opened the socket. */
export function attachSocket(s: Socket<any>, ws: UwsWebSocket): void {
  s._ws = ws;
}

/**
 * uWS closed the socket: it is never touched again, and its pending requests fail with
 * CLOSED. Returns the topics it was subscribed to when a bus or the subscriber index needs
 * them (uWS refuses getTopics() inside its close callback), else nothing.
 */
export function detachSocket(s: Socket<any>): Iterable<string> {
  s._ws = null;
  if (s._requests !== null) s._requests.closeAll();
  return s._tracked ?? NO_TOPICS;
}

/**
 * Shutdown: closes `s` (a close frame) once what is queued for it has gone out, checking every
 * 10 ms, or at `deadline` whatever is left. uWS runs the close handler at once on end(), and
 * the app then closes every connection: a socket ended with bytes still queued lost them and
 * its close frame, and close() did not wait for it (docs/realtime.md: shutdown waits).
 */
export function closeWhenDrained(s: Socket<any>, code: number, reason: string, deadline: number): void {
  const ws = s.closed ? null : s._ws;
  if (ws === null) return;
  if (ws.getBufferedAmount() === 0 || Date.now() >= deadline) s.close(code, reason);
  else setTimeout(closeWhenDrained, 10, s, code, reason, deadline);
}

/** The hub starts tracking topics (subscriber-index.ts): `s` keeps its set from now on; returns it. */
export function trackTopics(s: Socket<any>): Iterable<string> {
  if (s._tracked === null) s._tracked = new Set(s._ws === null ? [] : s._ws.getTopics());
  return s._tracked;
}

/**
 * Sends unless bytes are already waiting for `s` (then drops it: never queued). `direct`: a
 * send to this socket (counted in messagesOut), not a publish's fan-out.
 */
export function sendVolatile(s: Socket<any>, message: string, direct: boolean): SendResult {
  const ws = s._closing ? null : s._ws;
  if (ws === null) return 'closed';
  const stats = s._policy.stats;
  if (ws.getBufferedAmount() > 0) {
    if (stats !== null) stats.volatileDropped++;
    return 'dropped';
  }
  if (direct && stats !== null) stats.messagesOut++;
  return RESULT[ws.send(message, false)]!;
}

/** Socket.request() with the data already serialized (app.requestAll serializes once) and the timeout checked. */
export function requestEncoded<Reply>(s: Socket<any>, event: string, json: string | undefined, ms: number): Promise<Reply> {
  return new Promise<Reply>((resolve, reject) => {
    if (s.closed) return reject(new SocketRequestError('CLOSED', event, `Cannot send request "${event}": the socket is closed`));
    const requests = (s._requests ??= new PendingRequests(s._policy.maxPendingRequests));
    const id = requests.open(event, ms, resolve as (value: unknown) => void, reject);
    if (typeof id !== 'number') return reject(id);
    if (s.sendRaw(requestFrame(id, event, json), false) !== 'dropped') return;
    requests.take(id);
    reject(new SocketRequestError('DROPPED', event, `Request "${event}" dropped: the socket is over its maxBackpressure`));
  });
}

/** A client `reply` frame (control.ts): settles the request, or returns the BAD_FRAME error to send. */
export function replyReceived(s: Socket<any>, frame: Record<string, unknown>, log: Logger): string | null {
  return settleReply(s._requests, frame, log);
}
const NO_TOPICS: readonly string[] = [];

/** Publishes to this process's subscribers of `topic` except `s` (Socket.publish, and the hub's history topics). */
/**
 * A socket's publish on a history topic reached everyone but itself: it gets the position of
 * its message instead, so that its client's next message on the topic follows on from it (not
 * a gap to recover, which would replay the socket its own message).
 */
export function tellPosition(s: Socket<any>, topic: string, envelope: string): void {
  if (!s.isSubscribed(topic)) return;
  const frame = positionFrame(topic, envelope);
  if (frame !== null) s.sendRaw(frame, false);
}

export function publishExcept(s: Socket<any>, topic: string, envelope: string): boolean {
  const ws = s._closing ? null : s._ws;
  if (ws === null) return s._policy.hub.publishLocal(topic, envelope);
  const sent = ws.publish(topic, envelope, false);
  // uWS 20.57 refuses a publish from a socket that never subscribed to anything. Such a
  // socket is subscribed to nothing, so the app-level publish cannot echo it back to it.
  if (!sent && s.subscriptionCount === 0) return s._policy.hub.publishLocal(topic, envelope);
  // uWS's pub/sub never reaches fallback sessions: they get it from the hub's index, except the sender.
  const sse = s._policy.hub.sse;
  return sse === null ? sent : sse.publish(topic, envelope, ws) || sent;
}
