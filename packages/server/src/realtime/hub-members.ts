// The membership half of the app's hub: which sockets are open, who is subscribed to what
// (counts from uWS and the fallback transport, the bus told of a topic's first and last local
// subscriber), requests to every subscriber of a topic (requestAll), and closing them all at
// shutdown. WsHub (hub.ts) extends this class with publishing: a base class rather than a
// collaborator, so that a publish reads `uws`, `remote` and `sse` as its own fields, with no
// extra hop per message (publishing is the hot path; membership changes are not).
import { assertEventName, assertTopic, encodeData } from './protocol.ts';
import { closeWhenDrained, trackTopics, type Socket } from './socket.ts';
import type { UwsApp } from '../uws/index.ts';
import type { Logger } from '../core/logger.ts';
import { isInProcess, type Bus } from './bus/index.ts';
import type { PresenceTracker } from './presence/index.ts';
import { SubscriberIndex } from './subscriber-index.ts';
import { requestTimeout, type SocketRequestOptions } from './requests.ts';
import { requestAll, type RequestAllResult } from './request-all.ts';
import { SseTopics } from './fallback/topics.ts';

export abstract class HubMembers {
  /** Null until the app is compiled (attach): nothing is published or counted before. */
  protected uws: UwsApp | null = null;
  /** The bus, unless it is the in-process one: then null, and no publish pays for a bus. */
  protected readonly remote: Bus | null;
  readonly bus: Bus;
  protected readonly logger: Logger;
  /** Who is on presence topics; created by the first presence pattern (app.topic). */
  presence: PresenceTracker | null = null;
  private readonly sockets = new Set<Socket<any>>();
  /** Topic subscribers on the fallback transport (fallback/topics.ts); null until a `fallback: true` route is compiled. */
  sse: SseTopics | null = null;
  /** Who is subscribed to what, for volatile publishes and requestAll; built by the first use (subscriber-index.ts). */
  protected index: SubscriberIndex | null = null;
  private idle: (() => void)[] = [];

  constructor(bus: Bus, logger: Logger) {
    this.logger = logger;
    this.bus = bus;
    this.remote = isInProcess(bus) ? null : bus;
  }

  /** Sends everything queued (shutdown): the publishing side's batches, before the sockets close. @internal */
  abstract flush(): void;

  /** @internal */
  attach(uws: UwsApp): void {
    this.uws = uws;
  }

  /** A `fallback: true` route was compiled: sessions get their own topic index. @internal */
  enableFallback(): SseTopics {
    return (this.sse ??= new SseTopics());
  }

  /** A socket subscribed: the first local subscriber of a topic makes the bus interested. @internal */
  subscribed(s: Socket<any>, topic: string): void {
    if (this.index !== null) this.index.add(s, topic);
    if (this.remote === null || this.uws === null) return;
    const count = this.subscribers(topic);
    this.remote.subscriberCount?.(topic, count);
    if (count === 1) this.remote.interest(topic, true);
  }

  /** A socket unsubscribed: the last one gone ends the bus's interest. @internal */
  unsubscribed(s: Socket<any> | null, topic: string): void {
    if (s !== null && this.index !== null) this.index.remove(s, topic);
    if (this.remote === null || this.uws === null) return;
    const count = this.subscribers(topic);
    this.remote.subscriberCount?.(topic, count);
    if (count === 0) this.remote.interest(topic, false);
  }

  /**
   * A socket closed with these topics. The counts are read on the next turn, when uWS has
   * certainly removed the socket from its topics. @internal
   */
  socketClosing(s: Socket<any>, closing: Iterable<string>): void {
    const index = this.index;
    if (index !== null) for (const topic of closing) index.remove(s, topic);
    if (this.remote === null) return;
    const topics = [...closing];
    if (topics.length === 0) return;
    setImmediate(() => {
      for (const topic of topics) this.unsubscribed(null, topic);
    });
  }

  /** True when publishes also go to another process (worker threads, Redis, NATS). */
  get distributed(): boolean {
    return this.remote !== null;
  }

  /** True when sockets keep their topics: for the bus's interest, or the volatile index. @internal */
  get tracksTopics(): boolean {
    return this.remote !== null || this.index !== null;
  }

  /** The first volatile publish or requestAll: every open socket's topics go into the index, kept from now on. */
  protected buildIndex(): SubscriberIndex {
    const index = new SubscriberIndex();
    for (const s of this.sockets) for (const topic of trackTopics(s)) index.add(s, topic);
    return index;
  }

  /** app.requestAll(): a request to each subscriber of `topic` in this process (request-all.ts); `prefix` starts the ids. */
  requestAll<Reply>(
    topic: string,
    event: string,
    data: unknown,
    options: SocketRequestOptions | undefined,
    prefix = '0:',
  ): Promise<RequestAllResult<Reply>> {
    assertTopic(topic);
    assertEventName(event);
    const json = encodeData(data);
    const ms = requestTimeout(options);
    const subscribers = (this.index ??= this.buildIndex()).of(topic) ?? [];
    return requestAll<Reply>(subscribers, event, json, ms, prefix);
  }

  /** @internal */
  add(socket: Socket<any>): void {
    this.sockets.add(socket);
    this.remote?.connectionCount?.(this.sockets.size);
  }

  /** @internal */
  remove(socket: Socket<any>): void {
    if (!this.sockets.delete(socket)) return;
    this.remote?.connectionCount?.(this.sockets.size);
    if (this.sockets.size > 0) return;
    const idle = this.idle;
    this.idle = [];
    for (const wake of idle) wake();
  }

  get connections(): number {
    return this.sockets.size;
  }

  /** This process's open sockets (app.sockets()): a live view, read-only. */
  openSockets(): IterableIterator<Socket<any>> {
    return this.sockets.values();
  }

  /** Subscribers of `topic` in this process only (app.subscribers). */
  subscribers(topic: string): number {
    if (this.uws === null) return 0;
    const ws = this.uws.numSubscribers(topic);
    return this.sse === null ? ws : ws + this.sse.count(topic);
  }

  /**
   * Subscribers of `topic` on the whole bus (every worker, every server: app.cluster.subscribers),
   * or this process's when the bus cannot tell. A failing bus count is logged, not thrown.
   */
  totalSubscribers(topic: string): number {
    const local = this.subscribers(topic);
    if (this.remote === null || this.remote.subscribers === undefined) return local;
    let total: number | undefined;
    try {
      total = this.remote.subscribers(topic);
    } catch (err) {
      this.logger.error({ err, topic }, 'bus subscribers() failed');
    }
    return total ?? local;
  }

  /** Open WebSocket connections on the whole bus, or this process's when the bus cannot tell. */
  get totalConnections(): number {
    return this.remote?.connections?.() ?? this.sockets.size;
  }

  /** Closes every socket with `code` and resolves when all are gone (or after `timeout` ms, cutting the rest). */
  async closeAll(code: number, reason: string, timeout: number): Promise<void> {
    this.presence?.stop(); // the others forget our members now, not after the expiry
    this.flush();
    if (this.sockets.size === 0) return;
    const gone = new Promise<void>((resolve) => this.idle.push(resolve));
    const deadline = Date.now() + timeout;
    for (const s of [...this.sockets]) closeWhenDrained(s, code, reason, deadline);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      gone.then(() => false),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timeout))),
    ]);
    clearTimeout(timer);
    if (timedOut) for (const s of [...this.sockets]) s.terminate();
  }
}
