// The Redis side of a broker bus (BrokerBus in @tachyon/server does the rest): two node-redis
// connections, one to publish and one in subscriber mode (Redis takes a subscribed
// connection over), or with `sharded`, a cluster client that routes SPUBLISH to the shard
// owning the channel's slot and keeps one sharded subscriber per shard, or with `sentinel`,
// a sentinel client that finds the primary and follows a failover (sentinel.ts). node-redis
// reconnects with our backoff and resubscribes every channel by itself.
import { createClient, createCluster, type RedisClientType, type RedisClusterType } from '@redis/client';
import type { BrokerLink, BrokerTransport } from '@tachyon/server';
import type { RedisBusSettings } from './options.ts';
import { connectSentinel, PrimaryWatch, sentinelClient, type Sentinel } from './sentinel.ts';

/** 100 ms, doubling, at most 5 s, plus up to 20% jitter so servers don't reconnect in step. */
export function backoff(retries: number): number {
  const base = Math.min(100 * 2 ** Math.min(retries, 6), 5000);
  return Math.round(base + Math.random() * base * 0.2);
}

type Client = RedisClientType<any, any, any, any, any>;
type Cluster = RedisClusterType<any, any, any, any, any>;

export class RedisTransport implements BrokerTransport {
  readonly name = 'redis';
  private readonly settings: RedisBusSettings;
  private readonly presenceChannel: string;
  private link: BrokerLink | null = null;
  private pub: Client | null = null;
  private sub: Client | null = null;
  private cluster: Cluster | null = null;
  private sentinel: Sentinel | null = null;
  /** Sentinel: whether its primary answers. */
  private primary: PrimaryWatch | null = null;
  private connecting: { stop(): void } | null = null;
  /** The sentinel client connected once: from then on it keeps (and replays) our subscriptions. */
  private sentinelOpen = false;
  /** Channels wanted (cluster, sentinel), and those whose SSUBSCRIBE has not succeeded yet (cluster only). */
  private readonly wanted = new Set<string>();
  private readonly unconfirmed = new Set<string>();
  private up = false;
  private closed = false;
  private errors = 0;
  /** A retry of the cluster's first discovery. */
  private clusterRetry: NodeJS.Timeout | null = null;

  constructor(settings: RedisBusSettings) {
    this.settings = settings;
    this.presenceChannel = `${settings.prefix}"presence"`;
  }

  open(link: BrokerLink): void {
    this.link = link;
    const { client, urls } = this.settings;
    const socket = { ...client.socket, reconnectStrategy: backoff } as NonNullable<typeof client.socket>;
    if (this.settings.sharded) {
      this.cluster = createCluster({
        rootNodes: urls.map((url) => ({ url })),
        defaults: { ...client, socket },
        // Our own bound (BrokerBus's outbox) replaces node-redis's unbounded offline queue.
        useReplicas: false,
      }) as Cluster;
      // Any node event may change readiness; the node clients' state settles after the event.
      const recheck = () => setImmediate(this.check);
      this.cluster
        .on('error', this.onError)
        .on('node-error', this.onError)
        .on('node-reconnecting', recheck)
        .on('node-disconnect', recheck)
        .on('node-ready', () => {
          recheck();
          // A sharded subscriber came back: node-redis replays its listeners; ours that
          // failed while it was away are retried here.
          this.retryWanted();
        })
        .on('connect', recheck)
        .on('disconnect', recheck);
      this.connectCluster(0);
      return;
    }
    if (this.settings.sentinel !== null) return this.openSentinel(socket);
    this.pub = createClient({ ...client, url: urls[0], socket, disableOfflineQueue: true }) as Client;
    // The subscriber keeps node-redis's offline queue: (un)subscribes made while it is away
    // wait for it, and it replays every subscription when it reconnects.
    this.sub = this.pub.duplicate({ disableOfflineQueue: false }) as Client;
    for (const c of [this.pub, this.sub]) {
      c.on('error', this.onError).on('ready', this.check).on('end', this.check).on('reconnecting', this.check);
      // connect() keeps retrying (reconnectStrategy) and settles when ready or closed.
      c.connect().catch(() => {});
    }
  }

  /** A cluster client's first discovery fails when no seed node answers: retry with backoff. */
  private connectCluster(attempt: number): void {
    this.cluster!.connect().then(
      () => {
        this.check();
        this.retryWanted();
      },
      (err: unknown) => {
        if (this.closed) return;
        this.onError(err);
        this.clusterRetry = setTimeout(() => this.connectCluster(attempt + 1), backoff(attempt));
      },
    );
  }

  /**
   * The sentinel client stays "ready" while the primary is away (its commands wait for the
   * primary, or for the replica the sentinels promote): the primary watch (sentinel.ts) tells,
   * from node-redis's report of the lost connection (so `/readyz` says 503 within
   * milliseconds of a killed primary, with or without traffic) until a PING through the client
   * is answered. A primary frozen with its connection open reports nothing: the bus's stall
   * watch notices that (stallTimeout).
   */
  private openSentinel(socket: NonNullable<RedisBusSettings['client']['socket']>): void {
    const s = (this.sentinel = sentinelClient(this.settings.sentinel!, { ...this.settings.client, socket }));
    this.primary = new PrimaryWatch(s, backoff, this.onError, this.check);
    s.on('error', this.onError).on('end', this.check);
    this.connecting = connectSentinel(s, backoff, this.onError, () => {
      // Unlike a plain client, it refuses (un)subscribes before its first connection: those wait here.
      this.sentinelOpen = true;
      if (this.wanted.size > 0) s.subscribe([...this.wanted], this.listener, true).catch(this.failedSubscribe);
      this.primary!.probe(0);
    });
  }

  private readonly check = (): void => {
    const up =
      !this.closed &&
      (this.cluster !== null
        ? this.cluster.isReady && this.cluster.masters.every((m) => m.client?.isReady === true)
        : this.sentinel !== null
          ? this.sentinel.isReady && this.primary!.up
          : this.pub!.isReady && this.sub!.isReady);
    if (up === this.up) return;
    this.up = up;
    if (up) {
      this.errors = 0;
      this.link!.up();
    } else this.link!.down();
  };

  private readonly onError = (err: unknown): void => {
    // node-redis emits an error per failed attempt while reconnecting: log the 1st, 2nd, 4th…
    const n = ++this.errors;
    if (!this.closed && (n & (n - 1)) === 0)
      this.link?.logger.warn({ err, attempts: n }, 'redis bus: connection error (retrying with backoff)');
    this.check();
  };

  private readonly ok = (): void => this.link!.settled(1);
  private readonly lost = (err: unknown): void => this.link!.settled(1, err);

  send(topic: string | null, frame: Buffer): void {
    const channel = topic === null ? this.presenceChannel : this.settings.prefix + topic;
    const sent =
      this.cluster !== null
        ? this.cluster.sPublish(channel, frame)
        : this.sentinel !== null
          ? this.sentinel.publish(channel, frame)
          : this.pub!.publish(channel, frame);
    sent.then(this.ok, this.lost);
  }

  private readonly listener = (message: Buffer, channel: Buffer): void => {
    const name = channel.toString('latin1');
    if (name === this.presenceChannel) return this.link!.message(null, message);
    const prefix = this.settings.prefix;
    if (!name.startsWith(prefix)) return;
    this.link!.message(name.slice(prefix.length), message);
  };

  private readonly failedSubscribe = (err: unknown): void => {
    if (!this.closed) this.link?.logger.warn({ err }, 'redis bus: (un)subscribe failed; retried when the connection is back');
  };

  subscribe(topics: readonly (string | null)[]): void {
    const channels = topics.map((t) => (t === null ? this.presenceChannel : this.settings.prefix + t));
    if (this.sentinel !== null) {
      for (const c of channels) this.wanted.add(c);
      // After a failover, node-redis subscribes again on the new primary.
      if (this.sentinelOpen) this.sentinel.subscribe(channels, this.listener, true).catch(this.failedSubscribe);
      return;
    }
    if (this.cluster === null) {
      // One SUBSCRIBE for the batch; node-redis queues it while offline and replays every
      // subscription after a reconnect.
      this.sub!.subscribe(channels, this.listener, true).catch(this.failedSubscribe);
      return;
    }
    for (const c of channels) {
      this.wanted.add(c);
      this.sSubscribe(c);
    }
  }

  /** SSUBSCRIBE takes channels of one slot: one command per channel (pipelined). */
  private sSubscribe(channel: string): void {
    const cluster = this.cluster!;
    this.unconfirmed.add(channel);
    if (!cluster.isReady) return; // applied once the cluster is discovered (retryWanted)
    cluster.sSubscribe(channel, this.listener, true).then(
      () => {
        this.unconfirmed.delete(channel);
        // Unsubscribed meanwhile: undo.
        if (!this.wanted.has(channel)) cluster.sUnsubscribe(channel, this.listener, true).catch(() => {});
      },
      (err: unknown) => {
        if (this.wanted.has(channel)) this.failedSubscribe(err);
      },
    );
  }

  private retryWanted(): void {
    if (this.cluster === null || !this.cluster.isReady || this.closed) return;
    for (const c of this.unconfirmed)
      if (this.wanted.has(c)) this.sSubscribe(c);
      else this.unconfirmed.delete(c);
  }

  unsubscribe(topics: readonly string[]): void {
    const channels = topics.map((t) => this.settings.prefix + t);
    if (this.sentinel !== null) {
      for (const c of channels) this.wanted.delete(c);
      if (this.sentinelOpen) this.sentinel.unsubscribe(channels, this.listener as never, true).catch(this.failedSubscribe);
      return;
    }
    if (this.cluster === null) {
      this.sub!.unsubscribe(channels, this.listener, true).catch(this.failedSubscribe);
      return;
    }
    for (const c of channels) {
      this.wanted.delete(c);
      if (this.unconfirmed.delete(c)) continue;
      this.cluster.sUnsubscribe(c, this.listener, true).catch(() => {});
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.clusterRetry !== null) clearTimeout(this.clusterRetry);
    this.connecting?.stop();
    this.primary?.stop();
    if (this.cluster !== null) await settleNodeConnects(this.cluster);
    const clients = [this.pub, this.sub, this.cluster, this.sentinel].filter((c) => c !== null);
    // close() waits for pending replies when connected; destroy() when it is not.
    // (A sentinel client is "ready" while its primary is away: the PING probe tells.)
    const answers = (c: (typeof clients)[number]) => (c === this.sentinel ? this.primary!.up : c.isReady);
    await Promise.all(clients.map((c) => (answers(c) ? c.close().catch(() => c.destroy()) : Promise.resolve(c.destroy())).catch(() => {})));
    if (this.up) {
      this.up = false;
      this.link?.down();
    }
  }
}

/**
 * Waits (at most 1 s) for the cluster's node and sharded-subscriber connections still being
 * made. node-redis's close() skips a client whose connection is in flight, and that connection
 * then completes and stays open: one socket leaked per such close (seen in
 * test/buses/resources.test.ts when an SSUBSCRIBE had just opened a shard's subscriber).
 */
async function settleNodeConnects(cluster: Cluster): Promise<void> {
  const inFlight: Promise<unknown>[] = [];
  for (const m of cluster.masters) {
    if (m.connectPromise !== undefined) inFlight.push(m.connectPromise);
    if (m.pubSub?.connectPromise !== undefined) inFlight.push(m.pubSub.connectPromise);
  }
  if (inFlight.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled(inFlight), new Promise((r) => (timer = setTimeout(r, 1000)))]);
  clearTimeout(timer);
}
