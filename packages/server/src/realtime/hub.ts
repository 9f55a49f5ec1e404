// The app's realtime side: connected sockets (for counts and shutdown) and publishing to
// topics through uWS's C++ pub/sub, with the payload serialized once per publish. Local
// subscribers are always reached through uWS; a bus other than the in-process one also gets
// every publish (the same bytes) and hears when a topic gains its first or loses its last
// local subscriber (bus/bus.ts).
import { assertEventName, assertTopic, encodeData, topicEnvelope } from './protocol.ts';
import { closeWhenDrained, publishExcept, tellPosition, trackTopics, type Socket } from './socket.ts';
import type { UwsApp } from '../uws/index.ts';
import { silentLogger, type Logger } from '../core/logger.ts';
import { InProcessBus, isInProcess, type Bus, type BusMessage, type BusMeta } from './bus/index.ts';
import { runDeliverHooks, runPublishHooks, type PublishHooks } from './publish-hooks.ts';
import type { WsStats } from './stats.ts';
import { TopicRegistry, type ResolvedTopicOptions, type TopicOptions } from './topics/index.ts';
import { HistoryEngine } from './history/engine.ts';
import type { HistoryOptions } from './history/options.ts';
import type { HistoryRequest } from './history/store.ts';
import { PRESENCE_CHANNEL, PresenceTracker } from './presence/index.ts';
import { SubscriberIndex } from './subscriber-index.ts';
import { requestTimeout, type SocketRequestOptions } from './requests.ts';
import type { SharedKeys } from './once.ts';
import { requestAll, toBusAnswer, type RequestAllResult } from './request-all.ts';
import { SseTopics } from './fallback/topics.ts';
import { TopicBatches } from './batches.ts';
import { checkPublished } from './topics/validate.ts';

export interface PublishOptions {
  /**
   * Drop the event, instead of queueing it, for each subscriber under backpressure (bytes
   * already waiting in its send buffer): cursor positions, typing indicators. Not allowed on
   * history topics. Costs one JavaScript send per subscriber instead of uWS's native fan-out
   * (docs/realtime.md, "Volatile messages").
   */
  volatile?: boolean;
}

export class WsHub {
  private uws: UwsApp | null = null;
  /** The bus, unless it is the in-process one: then null, and no publish pays for a bus. */
  private readonly remote: Bus | null;
  readonly bus: Bus;
  /** Options declared per topic pattern (app.topic): history, presence. */
  readonly topics = new TopicRegistry();
  /** Who is on presence topics; created by the first presence pattern (app.topic). */
  presence: PresenceTracker | null = null;
  private readonly sockets = new Set<Socket<any>>();
  /** Topic subscribers on the fallback transport (fallback/topics.ts); null until a `fallback: true` route is compiled. */
  sse: SseTopics | null = null;
  /** Idempotency keys shared with the other workers of a cluster() (once.ts); set by the App before it starts. */
  sharedKeys: SharedKeys | null = null;
  /** Who is subscribed to what, for volatile publishes and requestAll; built by the first use (subscriber-index.ts). */
  private index: SubscriberIndex | null = null;
  private idle: (() => void)[] = [];
  /** Coalescing (batches.ts): null unless the app coalesces publishes. */
  private readonly batches: TopicBatches | null;

  private readonly logger: Logger;
  /** Publishes and subscribes on history topics (history/engine.ts). @internal */
  readonly history: HistoryEngine;
  private busFailures = 0;
  /** Counters for metrics(); null (nothing counted) unless a metrics() middleware is installed. @internal */
  stats: WsStats | null = null;
  /** The app's onPublish and onDeliver hooks (publish-hooks.ts); empty: a publish pays one length check. @internal */
  publishHooks: readonly PublishHooks['onPublish'][] = [];
  private deliverHooks: readonly PublishHooks['onDeliver'][] = [];

  /** `coalesce`: false, true (per loop iteration) or a tick in milliseconds (app options' coalescePublishes, resolved). */
  constructor(coalesce: boolean | number = false, bus: Bus = new InProcessBus(), logger: Logger = silentLogger) {
    this.batches = coalesce === false ? null : new TopicBatches(this.publishBatch, coalesce === true ? 0 : coalesce);
    this.logger = logger;
    this.bus = bus;
    this.remote = isInProcess(bus) ? null : bus;
    this.history = new HistoryEngine(this.deliverPositioned, logger);
  }

  /**
   * app.topic(): declares the pattern. History behind a bus needs a store every process
   * shares: each process's memory would number the same topic differently.
   */
  defineTopic(pattern: string, options: TopicOptions): ResolvedTopicOptions {
    const h = options?.history;
    if (h !== undefined && h.store?.shared !== true && (h.store !== undefined || !this.history.sharedDefault) && this.remote !== null) {
      throw new TypeError(
        `topic ${pattern}: history with a bus (cluster(), Redis, NATS) needs a store all processes share, e.g. history: { size, store: redisHistory({ url }) } from @tachyon/redis (docs/history.md)`,
      );
    }
    const declared = this.topics.define(pattern, options);
    h?.store?.useLogger?.(this.logger);
    if (declared.validate) this.validating = true;
    return declared;
  }

  /** True once a topic declared `validate: true`: only then do publishes pay for checkPublish. @internal */
  validating = false;

  /** Throws when a publish does not fit its topic's `events` (topics/validate.ts). @internal */
  checkPublish(topic: string, event: string, data: unknown): void {
    checkPublished(this.topics.lookup(topic), topic, event, data);
  }

  /** The history options of `topic`, or null: one cached lookup, or a field check when no pattern was declared. @internal */
  historyOf(topic: string): Readonly<HistoryOptions> | null {
    return this.topics.active ? (this.topics.lookup(topic)?.history ?? null) : null;
  }

  /** A publish on a history topic, by the app (`from` null) or a socket (Socket.publish), with the onPublish hooks' metadata. @internal */
  publishHistory(
    topic: string,
    event: string,
    json: string | undefined,
    h: Readonly<HistoryOptions>,
    from: Socket<any> | null,
    meta?: BusMeta,
  ): boolean {
    if (this.stats !== null) this.stats.publishes++;
    return this.history.publish(topic, event, json, h, from, meta);
  }

  /** A subscribe the route allowed, on a history topic. @internal */
  subscribeHistory(
    s: Socket<any>,
    topic: string,
    h: Readonly<HistoryOptions>,
    request: HistoryRequest | null,
    ref: number | undefined,
    async: boolean,
  ): void {
    this.history.subscribe(s, topic, h, request, ref, async);
  }

  /** History topics are never coalesced: each envelope carries its own position. */
  private readonly deliverPositioned = (topic: string, envelope: string, from: Socket<any> | null, meta: BusMeta | undefined): boolean => {
    if (this.uws === null) return false;
    if (this.history.recording) this.history.delivered(topic, envelope);
    if (this.remote !== null) this.sendToBus(topic, envelope, false, meta);
    if (from === null || from.closed) return this.fanOut(topic, envelope, false);
    const sent = publishExcept(from, topic, envelope);
    tellPosition(from, topic, envelope);
    return sent;
  };

  /**
   * Every local fan-out: uWS's native pub/sub, then the fallback transport's sessions when a
   * fallback route exists (binary frames cannot travel as SSE: docs/realtime.md).
   */
  private fanOut(topic: string, message: BusMessage, isBinary: boolean): boolean {
    const sent = this.uws!.publish(topic, message, isBinary);
    const sse = this.sse;
    if (sse === null || isBinary || typeof message !== 'string') return sent;
    return sse.publish(topic, message, null) || sent;
  }

  /** Publishes to this process's WebSocket subscribers only (a fallback session's publish: fallback/connection.ts). @internal */
  publishWebSockets(topic: string, message: string): boolean {
    return this.uws?.publish(topic, message, false) ?? false;
  }

  /** A `fallback: true` route was compiled: sessions get their own topic index. @internal */
  enableFallback(): SseTopics {
    return (this.sse ??= new SseTopics());
  }

  /** @internal */
  attach(uws: UwsApp): void {
    this.uws = uws;
  }

  /** The app's onPublish and onDeliver hooks, before start. @internal */
  useHooks(onPublish: readonly PublishHooks['onPublish'][], onDeliver: readonly PublishHooks['onDeliver'][]): void {
    this.publishHooks = onPublish;
    this.deliverHooks = onDeliver;
  }

  /** Runs the onPublish hooks (only called when there are some): the metadata for the bus, or undefined. @internal */
  publishing(topic: string, event: string | null, from: Socket<any> | null, volatile: boolean): BusMeta | undefined {
    const info = { event, socket: from, volatile, distributed: this.remote !== null };
    return runPublishHooks(this.publishHooks, topic, info, this.logger);
  }

  /** Starts the bus: messages from other processes go to this process's subscribers only. @internal */
  startBus(): void | Promise<void> {
    const started = this.bus.start(this.deliver, {
      logger: this.logger,
      localSubscribers: (topic) => this.subscribers(topic),
      requestAll: (ask, prefix) => this.requestAll(ask.topic, ask.event, ask.data, { timeout: ask.timeout }, prefix).then(toBusAnswer),
    });
    // Presence announces over the bus, so it starts once the bus has.
    const presence = this.presence;
    if (presence === null) return started;
    if (started instanceof Promise) return started.then(() => presence.start());
    presence.start();
  }

  private readonly deliver = (topic: string, message: BusMessage, isBinary: boolean, meta?: BusMeta): void => {
    if (this.uws === null) return;
    if (topic === PRESENCE_CHANNEL) return this.presence?.receive(message);
    if (meta !== undefined && this.deliverHooks.length !== 0) runDeliverHooks(this.deliverHooks, topic, meta, this.logger);
    this.flushTopic(topic);
    if (this.history.recording) this.history.delivered(topic, message);
    this.fanOut(topic, message, isBinary);
  };

  /** Tracks presence from now on (the first presence pattern was declared). @internal */
  enablePresence(heartbeat: number): PresenceTracker {
    const remote = this.remote;
    return (this.presence ??= new PresenceTracker(
      {
        lookup: (topic) => this.topics.lookup(topic)?.presence ?? null,
        publishLocal: (topic, message) => {
          this.flushTopic(topic);
          this.publishLocal(topic, message);
        },
        bus:
          remote === null
            ? null
            : {
                send: (message) => this.sendToBus(PRESENCE_CHANNEL, message, false),
                listen: () => {
                  remote.subscriberCount?.(PRESENCE_CHANNEL, 1);
                  remote.interest(PRESENCE_CHANNEL, true);
                },
              },
      },
      heartbeat,
      this.logger,
    ));
  }

  /** A socket published to a topic (uWS delivered it locally, except to the sender). @internal */
  socketPublished(topic: string, message: BusMessage, isBinary: boolean, meta?: BusMeta): void {
    if (this.remote !== null) this.sendToBus(topic, message, isBinary, meta);
  }

  /** Publishes an envelope to this process's subscribers only (a socket's publish, see Socket.publish). @internal */
  publishLocal(topic: string, message: string): boolean {
    return this.uws === null ? false : this.fanOut(topic, message, false);
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
  private buildIndex(): SubscriberIndex {
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

  /** A volatile publish: after the topic's pending batch, to each subscriber not under backpressure. */
  private publishVolatile(topic: string, envelope: string, meta: BusMeta | undefined): boolean {
    if (this.stats !== null) this.stats.publishes++;
    this.flushTopic(topic);
    if (this.remote !== null) this.sendToBus(topic, envelope, false, meta);
    return (this.index ??= this.buildIndex()).publishVolatile(topic, envelope);
  }

  private sendToBus(topic: string, message: BusMessage, isBinary: boolean, meta?: BusMeta): void {
    try {
      // Without metadata the bus is called exactly as before hooks existed (three arguments).
      if (meta === undefined) this.remote!.publish(topic, message, isBinary);
      else this.remote!.publish(topic, message, isBinary, meta);
    } catch (err) {
      // A bus must not throw (bus.ts); if one does, local delivery already happened. Logged
      // on the 1st, 2nd, 4th, 8th… failure: a broken bus must not flood the log.
      const n = ++this.busFailures;
      if ((n & (n - 1)) === 0) this.logger.error({ err, topic, failures: n }, 'bus publish failed');
    }
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

  publish(topic: string, event: string, data?: unknown, options?: PublishOptions): boolean {
    assertTopic(topic);
    assertEventName(event);
    if (this.validating) this.checkPublish(topic, event, data);
    const volatile = options?.volatile === true;
    const h = this.historyOf(topic);
    if (h !== null && volatile)
      throw new TypeError(
        `volatile publish to ${topic}: a history topic keeps every event; publish volatile events on a topic without history`,
      );
    if (this.uws === null) return false;
    const json = encodeData(data);
    const meta = this.publishHooks.length === 0 ? undefined : this.publishing(topic, event, null, volatile);
    if (h !== null) return this.publishHistory(topic, event, json, h, null, meta);
    if (volatile) return this.publishVolatile(topic, topicEnvelope(topic, event, json), meta);
    if (this.stats !== null) this.stats.publishes++;
    const envelope = topicEnvelope(topic, event, json);
    const batches = this.batches;
    if (batches === null) {
      if (this.remote !== null) this.sendToBus(topic, envelope, false, meta);
      return this.fanOut(topic, envelope, false);
    }
    batches.add(topic, envelope, meta);
    return true;
  }

  /** Closes the history stores the declared topics use. @internal */
  closeHistory(): Promise<void> {
    const stores = [];
    for (const t of this.topics.list()) if (t.history?.store !== undefined) stores.push(t.history.store);
    return this.history.close(stores);
  }

  /** Publishes a raw message (text or binary) to a topic. */
  publishRaw(topic: string, message: string | ArrayBuffer | Uint8Array, isBinary = typeof message !== 'string'): boolean {
    assertTopic(topic);
    if (this.uws === null) return false;
    const meta = this.publishHooks.length === 0 ? undefined : this.publishing(topic, null, null, false);
    if (this.stats !== null) this.stats.publishes++;
    this.flushTopic(topic);
    if (this.remote !== null) this.sendToBus(topic, message, isBinary, meta);
    return this.fanOut(topic, message, isBinary);
  }

  /** Sends a topic's queued envelopes now (batches.ts: before whatever must follow them). @internal */
  flushTopic(topic: string): void {
    if (this.batches !== null) this.batches.flushTopic(topic);
  }

  /** A coalesced batch's frame (batches.ts). */
  private readonly publishBatch = (topic: string, frame: string, meta: BusMeta | undefined): void => {
    if (this.uws === null) return;
    if (this.remote !== null) this.sendToBus(topic, frame, false, meta);
    this.fanOut(topic, frame, false);
  };

  /** Sends everything queued (shutdown). @internal */
  flush(): void {
    this.batches?.flushAll();
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
