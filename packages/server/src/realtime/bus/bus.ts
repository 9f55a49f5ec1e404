// Buses: how publishes reach subscribers beyond this process's uWS instance (other worker
// threads, other servers through Redis or NATS). The hub always delivers to local
// subscribers itself, through uWS's C++ pub/sub; a bus only carries the same bytes to the
// others, and brings theirs back. With the default in-process bus there are no others:
// nothing extra happens on a publish (docs/realtime.md, "Buses").
import type { Logger } from '../../core/logger.ts';

export type BusMessage = string | Uint8Array | ArrayBuffer;

/**
 * Metadata carried beside a message (never shown to browsers): what the app's onPublish hooks
 * returned (publish-hooks.ts), e.g. a W3C `traceparent`. Absent on most messages: a bus
 * sends exactly the bytes it sent before metadata existed when there is none.
 */
export type BusMeta = Record<string, string>;

/** Delivers a message that came from the bus to this process's subscribers of `topic`, with its metadata when it had some. */
export type BusDelivery = (topic: string, message: BusMessage, isBinary: boolean, meta?: BusMeta) => void;

/** What the app lends its bus at start: its logger, and its local subscriber counts. */
export interface BusHost {
  /** The app's logger: a bus logs its connection changes and the messages it drops here. */
  readonly logger: Logger;
  /** Subscribers of `topic` in this process (uWS's count). */
  localSubscribers(topic: string): number;
  /**
   * Another server's app.requestAll(): asks this process's subscribers of `ask.topic` and
   * answers with their replies, socket ids prefixed with `prefix` (`"<server>:<worker>:"`).
   * Absent where there are no sockets (a cluster's primary relay). Rejects on a bad ask.
   */
  requestAll?(ask: BusAsk, prefix: string): Promise<BusAnswer>;
}

/** app.requestAll() as it travels to the other servers (docs/realtime.md, "Acknowledged broadcasts"). */
export interface BusAsk {
  topic: string;
  event: string;
  /** The data as JSON would send it (toJSON applied), or undefined. */
  data?: unknown;
  /** Milliseconds each client gets to answer; 0: no limit. */
  timeout: number;
}

/** One server's answer to a BusAsk: ids already name the server and worker; errors as `{ code, message }`. */
export interface BusAnswer {
  replies: { id: string; data: unknown }[];
  missing: { id: string; code: string; message: string }[];
}

/**
 * A pub/sub transport between Tachyon processes. Experimental: the interface that
 * `@tachyon/redis`, `@tachyon/nats` and worker-thread clustering implement.
 */
export interface Bus {
  /**
   * Called once when the app starts, with the function that hands incoming messages to local
   * subscribers (and, since buses for other servers need them, the app's logger and local
   * counts). `listen()` waits for the returned promise: a bus for a remote broker should
   * not wait for the broker, so that an app starts while it is down.
   */
  start(deliver: BusDelivery, host?: BusHost): void | Promise<void>;
  /**
   * This process published `message` (already delivered locally): send it to the others.
   * Synchronous and non-blocking: queue it if the transport is busy. Never throws. `meta`,
   * when given, travels with it and comes out of the other side's `deliver`; a bus that
   * cannot carry it drops it (the message still goes).
   */
  publish(topic: string, message: BusMessage, isBinary: boolean, meta?: BusMeta): void;
  /**
   * Local interest changed: `true` when `topic` got its first subscriber in this process,
   * `false` when its last one left. A bus subscribes to a topic's channel only while
   * interested, so traffic nobody here watches never arrives.
   */
  interest(topic: string, interested: boolean): void;
  /**
   * True while the transport is connected and carrying messages. Absent means always ready.
   * `health()` answers `/readyz` with 503 while it returns false (docs/health.md). Called per
   * readiness probe, never per message: keep it a field read.
   */
  ready?(): boolean;
  /** Subscribers of `topic` on the whole bus, this process included, when the transport can tell (else undefined). */
  subscribers?(topic: string): number | undefined;
  /**
   * Optional, for cluster-wide counts: the number of this process's subscribers of `topic`
   * changed (called after every subscribe and unsubscribe, not only the first and last).
   */
  subscriberCount?(topic: string, count: number): void;
  /** Optional, for cluster-wide counts: this process's open WebSocket connections changed. */
  connectionCount?(count: number): void;
  /** Open WebSocket connections on the whole bus, this process included, when the transport can tell. */
  connections?(): number | undefined;
  /**
   * Optional, for cluster() workers that each connect to the broker (docs/cluster.md): the
   * workers of one process share `processId` (6 bytes); a bus drops what any of them
   * published, since the in-process mesh already delivered it. Called before start().
   */
  shareOrigin?(processId: Uint8Array, member: number): void;
  /** Optional, for a cluster's primary relay: subscribers per topic on the other servers. */
  remoteCounts?(): Map<string, number>;
  /**
   * Optional (broker buses): app.requestAll() on the other servers. Resolves with the answers
   * of the servers that answered in time (never rejects): by the ask's timeout plus a margin,
   * or sooner once every server known to have subscribers of the topic answered.
   */
  askAll?(ask: BusAsk): Promise<BusAnswer[]>;
  /** Names this process in requestAll socket ids (`"<server>:<worker>:<id>"`), with askAll. */
  readonly server?: string;
  /** Stops: unsubscribes and disconnects. Called when the app closes, after its sockets. */
  close(): void | Promise<void>;
}
