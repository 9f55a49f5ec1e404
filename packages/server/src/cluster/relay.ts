// The primary relays to the broker (cluster({ bus }), docs/cluster.md "With a broker"): one
// broker connection for the whole process instead of one per worker. Each worker has a port
// to the relay (the relay is one more peer of its thread bus): the worker sends every publish
// and its subscriber counts; the relay publishes to the broker, merges the workers' counts
// into the process's interest (a topic is subscribed on the broker while any worker has
// subscribers of it) and fans what the broker delivers out to the interested workers only,
// batched per event-loop turn. Workers still reach each other directly through the mesh: the
// relay never carries worker-to-worker traffic, and the broker echo of this process's own
// publishes is dropped by the broker bus (its origin). app.requestAll() asks cross the relay
// both ways as requests on the same ports (relay-request-all.ts).
import type { MessagePort } from 'node:worker_threads';
import type { Logger } from '../core/logger.ts';
import { Rpc } from '../core/rpc.ts';
import type { Bus, BusMessage, BusMeta } from '../realtime/bus/index.ts';
import { askWorkers, serveAsks } from './relay-request-all.ts';
import { COUNT, portable, PUBLISH, PUBLISH_META, queuePublish, READY } from './thread-bus.ts';

/** How often the other servers' counts and the broker's readiness are passed on to the workers (ms). */
const SHARE_EVERY = 200;

interface Member {
  readonly port: MessagePort;
  /** This worker's subscribers per topic (above zero only). */
  readonly counts: Map<string, number>;
  queue: unknown[];
  /** app.requestAll() asks with this worker, both ways. */
  readonly rpc: Rpc;
}

export class BrokerRelay {
  private readonly bus: Bus;
  private readonly logger: Logger;
  private readonly members = new Map<number, Member>();
  /** Subscribers per topic over every worker of this process (above zero only). */
  private readonly totals = new Map<string, number>();
  /** The other servers' counts as last sent to the workers, and the readiness. */
  private remote = new Map<string, number>();
  private ready = false;
  private flushQueued = false;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly flush = (): void => this.flushNow();

  constructor(bus: Bus, logger: Logger) {
    this.bus = bus;
    this.logger = logger;
  }

  /** Starts the broker bus (it connects in the background) before any worker exists. */
  async start(): Promise<void> {
    await this.bus.start((topic, message, isBinary, meta) => this.fromBroker(topic, message, isBinary, meta), {
      logger: this.logger,
      localSubscribers: (topic) => this.totals.get(topic) ?? 0,
      requestAll: (ask) =>
        askWorkers(
          Array.from(this.members, ([id, m]) => [id, m.rpc]),
          ask,
          this.logger,
        ),
    });
    this.timer = setInterval(() => this.share(), SHARE_EVERY);
    this.timer.unref();
  }

  /** Names this process in app.requestAll() ids (the broker bus's), passed to the workers. */
  get server(): string | undefined {
    return this.bus.server;
  }

  /** A worker (re)started: its end of the relay's port. It sends its counts first. */
  attach(id: number, port: MessagePort): void {
    this.detach(id);
    const rpc = new Rpc(0, (_to, message) => (port.postMessage(message), true));
    serveAsks(rpc, this.bus.askAll?.bind(this.bus));
    const member: Member = { port, counts: new Map(), queue: [], rpc };
    this.members.set(id, member);
    // Arrays are batches (thread-bus.ts); anything else is a request or a reply.
    port.on('message', (batch: any) => (Array.isArray(batch) ? this.fromWorker(member, batch) : rpc.receive(id, batch)));
    port.unref();
    member.queue.push(READY, this.ready);
    for (const [topic, count] of this.remote) member.queue.push(COUNT, topic, count);
    this.schedule();
  }

  /** A worker died or left: its subscribers are gone, which may end the process's interest in their topics. */
  detach(id: number): void {
    const member = this.members.get(id);
    if (member === undefined) return;
    this.members.delete(id);
    member.port.close();
    member.rpc.close(); // an ask waiting for it goes on without it
    for (const [topic, count] of member.counts) this.adjust(topic, -count);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    for (const id of [...this.members.keys()]) this.detach(id);
    await this.bus.close();
  }

  private fromWorker(member: Member, batch: unknown[]): void {
    for (let i = 0; i < batch.length; ) {
      const topic = batch[i + 1] as string;
      if (batch[i] === PUBLISH) {
        this.bus.publish(topic, batch[i + 2] as BusMessage, batch[i + 3] as boolean);
        i += 4;
      } else if (batch[i] === PUBLISH_META) {
        this.bus.publish(topic, batch[i + 2] as BusMessage, batch[i + 3] as boolean, batch[i + 4] as BusMeta);
        i += 5;
      } else {
        const count = batch[i + 2] as number;
        const before = member.counts.get(topic) ?? 0;
        if (count > 0) member.counts.set(topic, count);
        else member.counts.delete(topic);
        if (count !== before) this.adjust(topic, count - before);
        i += 3;
      }
    }
  }

  /** The process's count of `topic` changed by `delta`: interest on the first and after the last. */
  private adjust(topic: string, delta: number): void {
    const before = this.totals.get(topic) ?? 0;
    const after = Math.max(0, before + delta);
    if (after > 0) this.totals.set(topic, after);
    else this.totals.delete(topic);
    if (this.closed) return;
    if (before === 0 && after > 0) this.bus.interest(topic, true);
    else if (before > 0 && after === 0) this.bus.interest(topic, false);
    this.bus.subscriberCount?.(topic, after);
  }

  /** A message from another server: to each worker with subscribers of its topic, once. */
  private fromBroker(topic: string, message: BusMessage, isBinary: boolean, meta: BusMeta | undefined): void {
    let targets = 0;
    for (const member of this.members.values()) if (member.counts.has(topic)) targets++;
    if (targets === 0) return;
    const payload = portable(message, targets);
    for (const member of this.members.values()) if (member.counts.has(topic)) queuePublish(member.queue, topic, payload, isBinary, meta);
    this.schedule();
  }

  /** Passes on what changed in the other servers' counts, and the broker connection's state. */
  private share(): void {
    const ready = this.bus.ready?.() ?? true;
    const remote = this.bus.remoteCounts?.() ?? new Map<string, number>();
    const changes: unknown[] = [];
    if (ready !== this.ready) changes.push(READY, ready);
    for (const [topic, count] of remote) if (this.remote.get(topic) !== count) changes.push(COUNT, topic, count);
    for (const topic of this.remote.keys()) if (!remote.has(topic)) changes.push(COUNT, topic, 0);
    this.ready = ready;
    this.remote = remote;
    if (changes.length === 0) return;
    for (const member of this.members.values()) for (const entry of changes) member.queue.push(entry);
    this.schedule();
  }

  private schedule(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    setImmediate(this.flush);
  }

  private flushNow(): void {
    this.flushQueued = false;
    for (const member of this.members.values()) {
      if (member.queue.length === 0) continue;
      const batch = member.queue;
      member.queue = [];
      member.port.postMessage(batch);
    }
  }
}
