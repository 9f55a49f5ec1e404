// A bus over a message broker (Redis, NATS): what is the same whatever the broker. The
// transport (in @tachyon/redis, @tachyon/nats) only connects, sends frames, subscribes
// channels and reports what happens; this class frames messages with this process's origin,
// drops the broker's echo of them, checks what arrives before local fan-out, bounds what
// waits for a slow or absent broker, batches interest changes and keeps the cluster-wide
// subscriber counts (docs/scaling.md).
import type { Bus, BusAnswer, BusAsk, BusDelivery, BusHost, BusMessage, BusMeta } from '../bus.ts';
import { silentLogger, type Logger } from '../../../core/logger.ts';
import { checkFrame, encodeFrame, FrameKind, HEADER_BYTES, newOrigin, originOf, PROCESS_BYTES, sentBy } from './frame.ts';
import { META_FLAG, metaJson, payloadStart, readMeta } from './frame.ts';
import { Outbox } from './outbox.ts';
import { Presence } from './presence.ts';
import { brokerBusOptions, type BrokerBusOptions, type BrokerBusStats } from './options.ts';
import { RequestAllExchange } from './request-all-exchange.ts';
import { StallWatch } from './stall.ts';

export { brokerBusOptions, type BrokerBusOptions, type BrokerBusStats };

/** What a transport reports to its bus. */
export interface BrokerLink {
  readonly logger: Logger;
  /** Connected: publishes and subscriptions flow. */
  up(): void;
  /** Connection lost (the transport reconnects by itself, with backoff). */
  down(reason?: unknown): void;
  /** A frame arrived on a topic's channel, or on the presence channel (`topic` null). */
  message(topic: string | null, frame: Uint8Array): void;
  /** `count` sends were confirmed by the broker, or lost when `err` is given. */
  settled(count: number, err?: unknown): void;
}

/** One broker client: the part of a bus that differs between Redis and NATS. */
export interface BrokerTransport {
  /** For logs: "redis", "nats". */
  readonly name: string;
  /** Starts connecting in the background and keeps reconnecting until close(). Never throws. */
  open(link: BrokerLink): void;
  /** Sends one frame to a topic's channel (null: the presence channel). Called only while up; reports through link.settled. */
  send(topic: string | null, frame: Buffer): void;
  /** Subscribes these topics' channels (a batch; null: the presence channel). The transport keeps them across reconnects. */
  subscribe(topics: readonly (string | null)[]): void;
  unsubscribe(topics: readonly string[]): void;
  close(): Promise<void>;
}

export class BrokerBus implements Bus {
  private readonly origin = newOrigin();
  /** How much of a frame's origin marks it as ours: all of it, or the process part in a cluster worker. */
  private echoBytes = this.origin.byteLength;
  private readonly options: ReturnType<typeof brokerBusOptions>;
  private readonly outbox: Outbox;
  private readonly presence = new Presence();
  /** app.requestAll() with the other servers; built at start, once the origin is final. */
  private exchange: RequestAllExchange | null = null;
  private deliver: BusDelivery | null = null;
  private host: BusHost | null = null;
  private logger: Logger;
  private connected = false;
  private everConnected = false;
  private closed = false;
  /** Topics with local subscribers right now (what the app told us). */
  private readonly interested = new Set<string>();
  /** Topics subscribed on the broker (what we told the transport). */
  private readonly subscribed = new Set<string>();
  private interestQueued = false;
  private presenceTimer: NodeJS.Timeout | null = null;
  private presenceSoon: NodeJS.Timeout | null = null;
  private published = 0;
  private delivered = 0;
  private received = 0;
  private rejected = 0;
  private tooBig = 0;
  private metaTooBig = 0;
  private readonly link: BrokerLink;
  private readonly transport: BrokerTransport;
  /** Connected but not answering (stall.ts); null with stallTimeout: false. */
  private readonly stall: StallWatch | null;

  constructor(transport: BrokerTransport, options: BrokerBusOptions = {}) {
    this.transport = transport;
    this.options = brokerBusOptions(`${transport.name}Bus()`, options as Record<string, unknown>, []);
    this.logger = this.options.logger ?? silentLogger;
    this.outbox = new Outbox(this.options, (topic, frame) => {
      this.published++;
      this.transport.send(topic, frame);
    });
    const { stallTimeout } = this.options;
    this.stall = stallTimeout === false ? null : new StallWatch(stallTimeout, this.outbox, (stalled, ms) => this.onStall(stalled, ms));
    const bus = this;
    this.link = {
      get logger() {
        return bus.logger;
      },
      up: () => this.onUp(),
      down: (reason) => this.onDown(reason),
      message: (topic, frame) => this.onMessage(topic, frame),
      settled: (count, err) => this.onSettled(count, err),
    };
  }

  start(deliver: BusDelivery, host?: BusHost): void {
    if (this.deliver !== null) throw new Error(`${this.transport.name} bus already started: one bus per app`);
    this.deliver = deliver;
    this.host = host ?? null;
    if (this.options.logger === undefined && host !== undefined) this.logger = host.logger;
    const bus = this;
    this.exchange = new RequestAllExchange({
      origin: this.origin,
      shared: this.echoBytes === PROCESS_BYTES,
      maxMessageSize: this.options.maxMessageSize,
      get logger() {
        return bus.logger;
      },
      host: this.host,
      send: (topic, frame) => this.outbox.push(topic, frame),
      holders: (topic) => (this.options.presenceInterval === false ? null : this.presence.holders(topic)),
      reject: (topic, reason) => this.reject(topic, reason),
    });
    // Not awaited: the app serves local traffic while the broker is away.
    this.transport.open(this.link);
    this.stall?.start();
    // The control channel (presence, requestAll asks) and this bus's requestAll reply channel.
    this.transport.subscribe([null, this.exchange.reply]);
    if (this.options.presenceInterval !== false) {
      this.presenceTimer = setInterval(() => this.announce(), this.options.presenceInterval);
      this.presenceTimer.unref();
    }
  }

  publish(topic: string, message: BusMessage, isBinary: boolean, meta?: BusMeta): void {
    if (this.closed) return;
    const size = typeof message === 'string' ? message.length : message.byteLength;
    // A string's UTF-8 size is at most 3 bytes per UTF-16 unit: only measure near the limit.
    if (
      size > this.options.maxMessageSize / 3 &&
      (typeof message === 'string' ? Buffer.byteLength(message) : size) > this.options.maxMessageSize
    ) {
      const n = ++this.tooBig;
      if ((n & (n - 1)) === 0)
        this.logger.warn(
          { topic, bytes: size, maxMessageSize: this.options.maxMessageSize, count: n },
          'bus: publish over maxMessageSize not sent to other servers',
        );
      return;
    }
    const frame = encodeFrame(this.origin, isBinary ? FrameKind.Binary : FrameKind.Text, message, meta && this.metaBytes(topic, meta));
    if (!this.outbox.push(topic, frame)) {
      const n = this.outbox.dropped;
      if ((n & (n - 1)) === 0)
        this.logger.warn(
          { topic, dropped: n, queued: this.outbox.queued, connected: this.connected },
          `${this.transport.name} bus: publish queue full, message not sent to other servers`,
        );
    }
  }

  /** Metadata's frame bytes; too large, it is left out (the message still goes) and logged. */
  private metaBytes(topic: string, meta: BusMeta): Buffer | undefined {
    const json = metaJson(meta);
    if (json !== null) return json;
    const n = ++this.metaTooBig;
    if ((n & (n - 1)) === 0) this.logger.warn({ topic, count: n }, 'bus: publish metadata over 4 KiB left out');
    return undefined;
  }

  interest(topic: string, interested: boolean): void {
    if (interested) this.interested.add(topic);
    else this.interested.delete(topic);
    if (!this.interestQueued && !this.closed) {
      this.interestQueued = true;
      // Batched: every change of this event-loop turn becomes one subscribe and one unsubscribe.
      setImmediate(this.applyInterest);
    }
  }

  private readonly applyInterest = (): void => {
    this.interestQueued = false;
    if (this.closed) return;
    const add: string[] = [];
    const remove: string[] = [];
    for (const topic of this.interested) if (!this.subscribed.has(topic)) add.push(topic);
    for (const topic of this.subscribed) if (!this.interested.has(topic)) remove.push(topic);
    for (const t of add) this.subscribed.add(t);
    for (const t of remove) this.subscribed.delete(t);
    if (add.length > 0) this.transport.subscribe(add);
    if (remove.length > 0) this.transport.unsubscribe(remove);
    if (add.length > 0 || remove.length > 0) this.announceSoon();
  };

  /**
   * In a cluster() worker (thread-bus.ts): this bus's origin becomes the process's id plus the
   * worker's, and frames from any worker of this process are dropped on arrival (the mesh
   * already delivered them), presence included. Before start().
   */
  shareOrigin(processId: Uint8Array, member: number): void {
    if (this.deliver !== null) throw new Error('shareOrigin() must come before start()');
    this.origin.set(processId.subarray(0, PROCESS_BYTES));
    this.origin.writeUInt16BE(member & 0xffff, PROCESS_BYTES);
    this.echoBytes = PROCESS_BYTES;
  }

  /** Names this process in app.requestAll() socket ids: the 6 bytes of its origin the workers of a cluster() share, as hex. */
  get server(): string {
    return this.origin.subarray(0, PROCESS_BYTES).toString('hex');
  }

  /** app.requestAll() on the other servers (request-all-exchange.ts); none while the broker is away. */
  askAll(ask: BusAsk): Promise<BusAnswer[]> {
    if (this.exchange === null || !this.connected || this.closed) {
      if (this.exchange !== null)
        this.logger.warn({ topic: ask.topic }, `app.requestAll(): ${this.transport.name} bus disconnected, other servers not asked`);
      return Promise.resolve([]);
    }
    return this.exchange.ask(ask);
  }

  /** Subscribers per topic on the other servers, as last announced (the cluster's primary relay). */
  remoteCounts(): Map<string, number> {
    return this.presence.totals();
  }

  /** Subscribers of `topic` on every server: exact here, as of each server's last announcement elsewhere. */
  subscribers(topic: string): number | undefined {
    if (this.options.presenceInterval === false || this.host === null) return undefined;
    return this.host.localSubscribers(topic) + this.presence.others(topic);
  }

  /** Connected, and the broker answers (not stalled: stall.ts). */
  ready(): boolean {
    return this.connected && this.stall?.stalled !== true;
  }

  /** Counters for metrics and tests. */
  stats(): BrokerBusStats {
    return {
      connected: this.connected,
      stalled: this.stall?.stalled === true,
      published: this.published,
      received: this.received,
      delivered: this.delivered,
      queued: this.outbox.queued,
      queuedBytes: this.outbox.queuedBytes,
      inFlight: this.outbox.inFlight,
      dropped: this.outbox.dropped + this.tooBig,
      failed: this.outbox.failed,
      rejected: this.rejected,
      topics: this.subscribed.size,
    };
  }

  /** Other servers heard from on the presence channel recently. */
  get servers(): number {
    return this.presence.servers;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    if (this.presenceTimer !== null) clearInterval(this.presenceTimer);
    if (this.presenceSoon !== null) clearTimeout(this.presenceSoon);
    this.stall?.stop();
    // Tell the others this server is gone (an empty snapshot), then let queued publishes go.
    if (this.connected && this.options.presenceInterval !== false) {
      this.outbox.push(null, encodeFrame(this.origin, FrameKind.Presence, Presence.encode(1, [])));
    }
    this.closed = true;
    this.exchange?.close();
    this.interested.clear();
    this.presence.clear();
    const deadline = Date.now() + 2000;
    while (this.connected && (this.outbox.queued > 0 || this.outbox.inFlight > 0) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 5));
    this.outbox.clear();
    await this.transport.close();
    this.connected = false;
  }

  private onUp(): void {
    if (this.closed || this.connected) return;
    this.connected = true;
    this.logger.info(
      { bus: this.transport.name, queued: this.outbox.queued, reconnected: this.everConnected },
      `${this.transport.name} bus connected`,
    );
    this.everConnected = true;
    this.stall?.progress();
    this.outbox.setOpen(true);
    this.announceSoon();
  }

  private onDown(reason?: unknown): void {
    if (!this.connected) return;
    this.connected = false;
    this.stall?.progress(); // not stalled but down: ready() says so already
    this.outbox.setOpen(false);
    if (!this.closed)
      this.logger.warn(
        { bus: this.transport.name, err: reason },
        `${this.transport.name} bus disconnected: publishes queue (bounded) until it is back`,
      );
  }

  /** The broker stopped answering (`stalled`) for `ms`, or answers again after `ms`. */
  private onStall(stalled: boolean, ms: number): void {
    const { name } = this.transport;
    if (stalled)
      this.logger.warn(
        { bus: name, ms, inFlight: this.outbox.inFlight, queued: this.outbox.queued },
        `${name} bus: the broker has confirmed nothing for ${ms} ms: not ready until it answers`,
      );
    else this.logger.info({ bus: name, ms }, `${name} bus: the broker answers again (stalled ${ms} ms)`);
  }

  private onSettled(count: number, err?: unknown): void {
    this.outbox.settled(count, err === undefined);
    if (this.stall?.stalled) this.stall.progress();
    if (err !== undefined) {
      const n = this.outbox.failed;
      // Logged when the total crosses a power of two: an outage must not flood the log.
      if (Math.clz32(n - count) !== Math.clz32(n))
        this.logger.warn({ bus: this.transport.name, err, lost: n }, `${this.transport.name} bus: publishes lost with the connection`);
    }
  }

  private onMessage(topic: string | null, frame: Uint8Array): void {
    if (this.closed) return;
    if (topic !== null) this.received++;
    const problem = checkFrame(frame, this.options.maxMessageSize);
    if (problem !== null) return this.reject(topic, problem);
    if (sentBy(frame, this.origin, this.echoBytes)) return; // the broker's echo of our own (or a sibling worker's) publish
    const kind = frame[2]! & ~META_FLAG;
    if (topic === this.exchange?.reply) {
      if (kind !== FrameKind.Answer) return this.reject(topic, 'not a requestAll answer on the reply channel');
      return this.exchange.receiveAnswer(frame);
    }
    if (kind === FrameKind.Answer) return this.reject(topic, 'a requestAll answer off the reply channel');
    if (kind === FrameKind.Ask) {
      if (topic !== null) return this.reject(topic, 'a requestAll ask on a topic channel');
      return this.exchange?.receiveAsk(frame);
    }
    if (topic === null) {
      if (kind !== FrameKind.Presence) return this.reject(topic, 'a message on the presence channel');
      const refused = this.presence.receive(
        originOf(frame),
        Buffer.from(frame.buffer, frame.byteOffset + HEADER_BYTES, frame.byteLength - HEADER_BYTES).toString(),
      );
      if (refused !== null) this.reject(topic, refused);
      return;
    }
    if (kind === FrameKind.Presence) return this.reject(topic, 'a presence frame on a topic channel');
    // Arrivals for a topic nobody here watches any more (the unsubscribe is on its way).
    if (!this.interested.has(topic) || this.deliver === null) return;
    let meta: BusMeta | undefined;
    if (kind !== frame[2]) {
      const read = readMeta(frame);
      if (typeof read === 'string') return this.reject(topic, read);
      meta = read;
    }
    this.delivered++;
    try {
      if (meta === undefined) this.deliver(topic, frame.subarray(HEADER_BYTES), kind === FrameKind.Binary);
      else this.deliver(topic, frame.subarray(payloadStart(frame)), kind === FrameKind.Binary, meta);
    } catch (err) {
      this.logger.error({ err, topic }, 'bus: local delivery failed');
    }
  }

  private reject(topic: string | null, reason: string): void {
    const n = ++this.rejected;
    if ((n & (n - 1)) === 0)
      this.logger.warn(
        { bus: this.transport.name, topic, reason, rejected: n },
        `${this.transport.name} bus: dropped a bad message from the broker`,
      );
  }

  private announceSoon(): void {
    if (this.options.presenceInterval === false || this.presenceSoon !== null || this.closed) return;
    this.presenceSoon = setTimeout(() => {
      this.presenceSoon = null;
      this.announce();
    }, 50);
    this.presenceSoon.unref();
  }

  private announce(): void {
    const host = this.host;
    if (!this.connected || this.closed || host === null || this.options.presenceInterval === false) return;
    const counts: [string, number][] = [];
    for (const topic of this.interested) counts.push([topic, host.localSubscribers(topic)]);
    // Not queued behind publishes when the window is full: a late snapshot is useless.
    if (this.outbox.queued > 0) return;
    this.outbox.push(null, encodeFrame(this.origin, FrameKind.Presence, Presence.encode(this.options.presenceInterval * 3, counts)));
  }
}
