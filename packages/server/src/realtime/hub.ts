// The app's realtime side: publishing to topics through uWS's C++ pub/sub, with the payload
// serialized once per publish, and what publishes depend on (topic declarations, history,
// presence, coalescing, the onPublish/onDeliver hooks, the bus). Local subscribers are always
// reached through uWS; a bus other than the in-process one also gets every publish (the same
// bytes) and hears when a topic gains its first or loses its last local subscriber (bus/bus.ts).
// Connected sockets, subscriber counts, requestAll and shutdown are the base class's
// (hub-members.ts): they share this object's fields, so a publish pays no extra hop.
import { assertEventName, assertTopic, encodeData, topicEnvelope } from './protocol.ts';
import { publishExcept, tellPosition, type Socket } from './socket.ts';
import { silentLogger, type Logger } from '../core/logger.ts';
import { InProcessBus, type Bus, type BusMessage, type BusMeta } from './bus/index.ts';
import { runDeliverHooks, runPublishHooks, type PublishHooks } from './publish-hooks.ts';
import type { WsStats } from './stats.ts';
import { TopicRegistry, type ResolvedTopicOptions, type TopicOptions } from './topics/index.ts';
import { HistoryEngine } from './history/engine.ts';
import type { HistoryOptions } from './history/options.ts';
import type { HistoryRequest } from './history/store.ts';
import { PRESENCE_CHANNEL, PresenceTracker } from './presence/index.ts';
import type { SharedKeys } from './once.ts';
import { toBusAnswer } from './request-all.ts';
import { TopicBatches } from './batches.ts';
import { HubMembers } from './hub-members.ts';
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

export class WsHub extends HubMembers {
  /** Options declared per topic pattern (app.topic): history, presence. */
  readonly topics = new TopicRegistry();
  /** Idempotency keys shared with the other workers of a cluster() (once.ts); set by the App before it starts. */
  sharedKeys: SharedKeys | null = null;
  /** Coalescing (batches.ts): null unless the app coalesces publishes. */
  private readonly batches: TopicBatches | null;
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
    super(bus, logger);
    this.batches = coalesce === false ? null : new TopicBatches(this.publishBatch, coalesce === true ? 0 : coalesce);
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
}
