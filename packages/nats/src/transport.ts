// The NATS side of a broker bus (BrokerBus in @tachyon/server does the rest): one nats.js
// connection with no echo (the server does not send our own publishes back), a subscription
// per watched topic, and publishes confirmed in batches by a flush (a PING the server
// answers once it has processed everything before it). nats.js reconnects and resubscribes
// by itself once connected; before the first connection we retry with our own backoff.
import { connect, type NatsConnection, type Subscription, type Msg } from '@nats-io/transport-node';
import type { BrokerLink, BrokerTransport } from '@tachyon/server';
import { topicToken, type NatsBusSettings } from './options.ts';

export function backoff(attempt: number): number {
  const base = Math.min(100 * 2 ** Math.min(attempt, 6), 5000);
  return Math.round(base + Math.random() * base * 0.2);
}

export class NatsTransport implements BrokerTransport {
  readonly name = 'nats';
  private readonly settings: NatsBusSettings;
  private readonly presenceSubject: string;
  private readonly topicPrefix: string;
  private link: BrokerLink | null = null;
  private nc: NatsConnection | null = null;
  /** Subscriptions wanted (applied when connected); null key: the presence subject. */
  private readonly subs = new Map<string | null, Subscription | null>();
  private up = false;
  private closed = false;
  private attempts = 0;
  private reconnects = 0;
  private retry: NodeJS.Timeout | null = null;
  /** Publishes since the last flush started, and whether one is running. */
  private unconfirmed = 0;
  private flushing = 0;
  /** Bumped on each disconnect: a flush from before it settles nothing. */
  private generation = 0;
  private flushQueued = false;

  constructor(settings: NatsBusSettings) {
    this.settings = settings;
    this.presenceSubject = `${settings.prefix}.presence`;
    this.topicPrefix = `${settings.prefix}.t.`;
  }

  open(link: BrokerLink): void {
    this.link = link;
    this.connect();
  }

  private connect(): void {
    if (this.closed) return;
    connect({
      name: 'tachyon',
      ...this.settings.connection,
      servers: this.settings.servers,
      noEcho: true,
      reconnect: true,
      maxReconnectAttempts: -1,
      // Between reconnects once connected (nats.js's own loop); first connections are ours.
      reconnectDelayHandler: () => backoff(this.reconnects++),
      waitOnFirstConnect: false,
    }).then(
      (nc) => {
        if (this.closed) {
          nc.close().catch(() => {});
          return;
        }
        this.nc = nc;
        this.attempts = 0;
        for (const topic of this.subs.keys()) this.subs.set(topic, this.subscribeNow(topic));
        void this.watch(nc);
        this.setUp(true);
      },
      (err: unknown) => {
        if (this.closed) return;
        const n = ++this.attempts;
        if ((n & (n - 1)) === 0) this.link?.logger.warn({ err, attempts: n }, 'nats bus: cannot connect (retrying with backoff)');
        this.retry = setTimeout(() => this.connect(), backoff(n));
      },
    );
  }

  private async watch(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') {
        this.setUp(false);
        this.link?.logger.warn({ server: (s as { server?: string }).server }, 'nats bus: disconnected (reconnecting)');
      } else if (s.type === 'reconnect') {
        this.reconnects = 0;
        this.setUp(true);
      } else if (s.type === 'error') this.link?.logger.warn({ err: (s as { error?: unknown }).error }, 'nats bus: server error');
      else if (s.type === 'close') this.setUp(false);
    }
  }

  private setUp(up: boolean): void {
    if (up === this.up || (up && this.closed)) return;
    this.up = up;
    if (up) this.link!.up();
    else {
      // What was sent and not confirmed is reported lost now (it may still arrive: nats.js
      // resends its buffer after reconnecting); later flush answers settle nothing.
      this.generation++;
      const lost = this.unconfirmed + this.flushing;
      this.unconfirmed = 0;
      this.flushing = 0;
      this.flushQueued = false;
      this.link!.down();
      if (lost > 0) this.link!.settled(lost, new Error('connection lost before the server confirmed'));
    }
  }

  send(topic: string | null, frame: Buffer): void {
    const subject = topic === null ? this.presenceSubject : this.topicPrefix + topicToken(topic);
    try {
      this.nc!.publish(subject, frame);
    } catch (err) {
      // Over the server's max_payload, or the connection just closed.
      this.link!.settled(1, err);
      return;
    }
    this.unconfirmed++;
    if (!this.flushQueued && this.flushing === 0) {
      this.flushQueued = true;
      setImmediate(this.flush);
    }
  }

  private readonly flush = (): void => {
    this.flushQueued = false;
    if (this.unconfirmed === 0 || this.flushing > 0 || this.nc === null || !this.up) return;
    const n = this.unconfirmed;
    const generation = this.generation;
    this.unconfirmed = 0;
    this.flushing = n;
    this.nc.flush().then(
      () => this.flushed(generation, n),
      (err: unknown) => this.flushed(generation, n, err),
    );
  };

  private flushed(generation: number, n: number, err?: unknown): void {
    if (generation !== this.generation) return;
    this.flushing = 0;
    this.link!.settled(n, err);
    if (this.unconfirmed > 0) this.flush();
  }

  private subscribeNow(topic: string | null): Subscription {
    const link = this.link!;
    const subject = topic === null ? this.presenceSubject : this.topicPrefix + topicToken(topic);
    // One callback per subscription (per topic, not per message): it knows its topic.
    return this.nc!.subscribe(subject, {
      callback: (err: Error | null, msg: Msg) => {
        if (err !== null) link.logger.warn({ err, topic }, 'nats bus: subscription error');
        else link.message(topic, msg.data);
      },
    });
  }

  subscribe(topics: readonly (string | null)[]): void {
    for (const topic of topics) {
      if (this.subs.get(topic)) continue;
      // Before the first connection the wish is kept; connect() applies it.
      this.subs.set(topic, this.nc !== null && !this.nc.isClosed() ? this.subscribeNow(topic) : null);
    }
  }

  unsubscribe(topics: readonly string[]): void {
    for (const topic of topics) {
      const sub = this.subs.get(topic);
      this.subs.delete(topic);
      if (sub) sub.unsubscribe();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry !== null) clearTimeout(this.retry);
    const nc = this.nc;
    this.nc = null;
    if (nc !== null && !nc.isClosed()) await nc.close().catch(() => {});
    if (this.up) this.setUp(false);
  }
}
