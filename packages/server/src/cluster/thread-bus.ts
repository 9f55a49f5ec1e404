// The bus between the worker threads of one cluster: a direct MessagePort between every pair
// of workers (the primary sets the mesh up and tears a dead worker's ports down), so a publish
// reaches another worker in one hop and in order (each port is FIFO: per publisher, per
// topic order holds). Each worker tells the others how many subscribers it has per topic; a
// publish goes only to workers whose count is above zero (interest tracking), and those
// counts are also the cluster-wide subscriber counts. Messages to one peer are batched per
// event-loop turn (one postMessage per peer per turn, not per publish), and a large message
// bound for several workers is copied once into shared memory that each of them reads.
// Open connections are counted in a SharedArrayBuffer slot per worker.
//
// With a broker (docs/cluster.md, "With a broker"), either the worker's own broker bus is
// composed with this one (compose(): each worker connects), or the primary holds the one
// broker connection and is one more peer, the relay (addRelay(): it gets every publish and
// this worker's counts, and sends back the broker's messages and the other servers' counts).
import type { MessagePort } from 'node:worker_threads';
import type { Bus, BusAnswer, BusAsk, BusDelivery, BusHost, BusMessage, BusMeta } from '../realtime/bus/index.ts';

/** Messages at least this long are copied once into shared memory when several workers get them. */
export const SHARE_THRESHOLD = 1024;

/** Entries of a batch between threads (the relay in relay.ts speaks the same). */
export const PUBLISH = 0;
export const COUNT = 1;
/** From the relay only: [READY, connected]: the primary's broker connection went up or down. */
export const READY = 2;
/** [PUBLISH_META, topic, message, isBinary, meta]: a publish with onPublish metadata (Bus.publish's `meta`). */
export const PUBLISH_META = 3;

/** The relay's peer id: workers are 1-based. */
const RELAY = 0;

interface Peer {
  readonly id: number;
  readonly port: MessagePort;
  /** The peer's subscribers per topic (only topics above zero are kept). */
  readonly counts: Map<string, number>;
  /** Flat entries queued this turn: [PUBLISH, topic, message, isBinary] or [COUNT, topic, count]. */
  queue: unknown[];
}

export interface ThreadBusStats {
  /** Messages sent to other workers (one per receiving worker). */
  sent: number;
  /** Messages received from other workers and delivered here. */
  received: number;
  /** Messages from the broker handed to this worker by the primary's relay (cluster({ bus })). */
  relayed: number;
}

export class ThreadBus implements Bus {
  private deliver: BusDelivery | null = null;
  private readonly peers = new Map<number, Peer>();
  /** This worker's subscribers per topic. */
  private readonly local = new Map<string, number>();
  private readonly dirty = new Set<string>();
  private flushQueued = false;
  readonly stats: ThreadBusStats = { sent: 0, received: 0, relayed: 0 };
  private readonly flush = (): void => this.flushNow();
  /** Messages that are not batches (app.cluster requests, core/rpc.ts): told who sent them. */
  onMessage: ((from: number, message: any) => void) | undefined;
  /** A worker's ports went away (it died, restarts or left). */
  onPeerGone: ((id: number) => void) | undefined;
  /** With the primary relaying: app.requestAll() on the other servers, through it (relay-request-all.ts). */
  askAll: ((ask: BusAsk) => Promise<BusAnswer[]>) | undefined;
  /** With the primary relaying: its broker bus's name for this process in requestAll ids. */
  server: string | undefined;

  /** This worker's id (1-based), its slot in `connectionSlots`. */
  readonly id: number;
  /** Open connections per worker, shared by every thread of the cluster. */
  private readonly connectionSlots: Int32Array;

  /** The workers of this process share it: their broker buses drop each other's echoes (compose()). */
  private readonly processId: Uint8Array | undefined;

  constructor(id: number, connectionSlots: Int32Array, processId?: Uint8Array) {
    this.id = id;
    this.connectionSlots = connectionSlots;
    this.processId = processId;
  }

  /** Another bus (a broker) this one also forwards to and hears from (docs/cluster.md, "With a broker"). */
  private outer: Bus | undefined;
  /** The primary's relay to the broker, when cluster({ bus }) was given (relay.ts). */
  private relay: Peer | undefined;
  private relayReady = false;

  /**
   * Before start(): also publish to, and hear from, `outer` (this worker's own broker
   * connection). The other workers of this process are reached through the mesh, so `outer`
   * is told to drop what they publish when the broker hands it back (Bus.shareOrigin).
   */
  compose(outer: Bus): void {
    if (this.deliver !== null) throw new Error('compose() must come before start()');
    this.outer = outer;
    if (this.processId !== undefined) outer.shareOrigin?.(this.processId, this.id);
  }

  start(deliver: BusDelivery, host?: BusHost): void | Promise<void> {
    this.deliver = deliver;
    return this.outer?.start(deliver, host);
  }

  /** True while the broker is reachable (this worker's own connection, or the primary's); true without a broker. */
  ready(): boolean {
    if (this.outer !== undefined) return this.outer.ready?.() ?? true;
    return this.relay === undefined || this.relayReady;
  }

  /**
   * The primary relays to the broker (cluster({ bus })): it gets every publish of this worker
   * and its subscriber counts, and sends back what the broker delivered for this worker's
   * topics, the other servers' counts, and whether it is connected.
   */
  addRelay(port: MessagePort): void {
    if (this.relay !== undefined) this.relay.port.close();
    this.relay = this.link(RELAY, port);
  }

  /** A new worker joined: tell it what we are subscribed to, and listen to it. */
  addPeer(id: number, port: MessagePort): void {
    this.removePeer(id);
    this.peers.set(id, this.link(id, port));
  }

  /** Listens to `port` and queues this worker's subscriber counts for it. */
  private link(id: number, port: MessagePort): Peer {
    const peer: Peer = { id, port, counts: new Map(), queue: [] };
    port.on('message', (batch: unknown[]) => this.receive(peer, batch));
    port.unref(); // the uWS app keeps the worker alive; the mesh must not keep a closing one
    for (const [topic, count] of this.local) peer.queue.push(COUNT, topic, count);
    this.schedule();
    return peer;
  }

  /** A worker died or left: forget its ports and its subscriptions. */
  removePeer(id: number): void {
    const peer = this.peers.get(id);
    if (peer === undefined) return;
    this.peers.delete(id);
    peer.port.close();
    this.onPeerGone?.(id);
  }

  /**
   * Posts `message` (not an array: those are batches) to worker `to` (0: the relay) now, after what is queued
   * for it (so it arrives after this worker's earlier publishes); false without a port to it.
   * Throws what postMessage throws (a DataCloneError), having sent nothing of `message`.
   */
  message(to: number, message: object): boolean {
    const peer = to === RELAY ? this.relay : this.peers.get(to);
    if (peer === undefined) return false;
    send(peer);
    peer.port.postMessage(message);
    return true;
  }

  publish(topic: string, message: BusMessage, isBinary: boolean, meta?: BusMeta): void {
    if (meta === undefined) this.outer?.publish(topic, message, isBinary);
    else this.outer?.publish(topic, message, isBinary, meta);
    const relay = this.relay;
    let targets = relay === undefined ? 0 : 1;
    for (const peer of this.peers.values()) if (peer.counts.has(topic)) targets++;
    if (targets === 0) return;
    const payload = portable(message, targets);
    for (const peer of this.peers.values()) {
      if (peer.counts.has(topic)) queuePublish(peer.queue, topic, payload, isBinary, meta);
    }
    // The relay gets every publish: the other servers' interest is the broker's business.
    if (relay !== undefined) queuePublish(relay.queue, topic, payload, isBinary, meta);
    this.stats.sent += targets;
    this.schedule();
  }

  interest(topic: string, interested: boolean): void {
    this.outer?.interest(topic, interested);
    // Without subscriberCount calls (a hub that does not send them), interest alone still counts.
    if (interested && !this.local.has(topic)) this.subscriberCount(topic, 1);
    else if (!interested && this.local.has(topic)) this.subscriberCount(topic, 0);
  }

  subscriberCount(topic: string, count: number): void {
    this.outer?.subscriberCount?.(topic, count);
    if (count > 0) this.local.set(topic, count);
    else if (!this.local.delete(topic)) return;
    this.dirty.add(topic);
    this.schedule();
  }

  subscribers(topic: string): number {
    // A composed broker bus counts this worker and the other servers (its host is this worker's hub).
    let total = this.outer?.subscribers?.(topic) ?? this.local.get(topic) ?? 0;
    for (const peer of this.peers.values()) total += peer.counts.get(topic) ?? 0;
    if (this.relay !== undefined) total += this.relay.counts.get(topic) ?? 0;
    return total;
  }

  connectionCount(count: number): void {
    Atomics.store(this.connectionSlots, this.id, count);
  }

  connections(): number {
    let total = 0;
    for (let i = 0; i < this.connectionSlots.length; i++) total += Atomics.load(this.connectionSlots, i);
    return total;
  }

  async close(): Promise<void> {
    this.flushNow();
    Atomics.store(this.connectionSlots, this.id, 0);
    for (const id of [...this.peers.keys()]) this.removePeer(id);
    this.relay?.port.close();
    await this.outer?.close();
  }

  private receive(peer: Peer, batch: unknown[]): void {
    if (!Array.isArray(batch)) return this.onMessage?.(peer.id, batch);
    const deliver = this.deliver;
    for (let i = 0; i < batch.length; ) {
      if (batch[i] === PUBLISH || batch[i] === PUBLISH_META) {
        if (peer === this.relay) this.stats.relayed++;
        else this.stats.received++;
        const meta = batch[i] === PUBLISH_META ? (batch[i + 4] as BusMeta) : undefined;
        if (deliver !== null) deliver(batch[i + 1] as string, batch[i + 2] as BusMessage, batch[i + 3] as boolean, meta);
        i += meta === undefined ? 4 : 5;
      } else if (batch[i] === READY) {
        this.relayReady = batch[i + 1] === true;
        i += 2;
      } else {
        const topic = batch[i + 1] as string;
        const count = batch[i + 2] as number;
        if (count > 0) peer.counts.set(topic, count);
        else peer.counts.delete(topic);
        i += 3;
      }
    }
  }

  private schedule(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    // After the poll phase: everything uWS read this turn is in the batch.
    setImmediate(this.flush);
  }

  private flushNow(): void {
    this.flushQueued = false;
    if (this.dirty.size > 0) {
      for (const topic of this.dirty) {
        const count = this.local.get(topic) ?? 0;
        for (const peer of this.peers.values()) peer.queue.push(COUNT, topic, count);
        this.relay?.queue.push(COUNT, topic, count);
      }
      this.dirty.clear();
    }
    for (const peer of this.peers.values()) send(peer);
    if (this.relay !== undefined) send(this.relay);
  }
}

/** Queues a publish entry: the 4-entry form without metadata (the bytes of before), 5 with it. */
export function queuePublish(queue: unknown[], topic: string, message: BusMessage, isBinary: boolean, meta: BusMeta | undefined): void {
  if (meta === undefined) queue.push(PUBLISH, topic, message, isBinary);
  else queue.push(PUBLISH_META, topic, message, isBinary, meta);
}

function send(peer: Peer): void {
  if (peer.queue.length === 0) return;
  const batch = peer.queue;
  peer.queue = [];
  peer.port.postMessage(batch);
}

const encoder = new TextEncoder();

/**
 * What goes into postMessage. postMessage copies its argument once per port; for a large
 * message bound for several workers, one copy into a SharedArrayBuffer is shared by all of
 * them instead. A view over part of a larger buffer (a pooled Buffer) is cut to its bytes:
 * structured clone would copy the whole backing buffer.
 */
export function portable(message: BusMessage, targets: number): BusMessage {
  if (typeof message === 'string') {
    if (targets < 2 || message.length < SHARE_THRESHOLD) return message;
    const bytes = new Uint8Array(new SharedArrayBuffer(Buffer.byteLength(message)));
    encoder.encodeInto(message, bytes);
    return bytes;
  }
  const view = message instanceof ArrayBuffer ? new Uint8Array(message) : message;
  if (targets < 2 || view.byteLength < SHARE_THRESHOLD) {
    return view.byteOffset === 0 && view.byteLength === view.buffer.byteLength ? message : view.slice();
  }
  const bytes = new Uint8Array(new SharedArrayBuffer(view.byteLength));
  bytes.set(view);
  return bytes;
}
