// The options every broker bus takes (Redis, NATS), checked once with messages that name
// the option, and the counters it reports (docs/scaling.md, "Options").
import type { Logger } from '../../../core/logger.ts';
import { checkKnownKeys } from '../../../core/options-check.ts';

export interface BrokerBusOptions {
  /** Largest message (bytes) carried either way; bigger publishes and arrivals are dropped and logged. Default 1 MiB. */
  maxMessageSize?: number;
  /** Publishes sent and not yet confirmed by the broker. Default 1024. */
  maxInFlight?: number;
  /** Publishes waiting while the broker is slow or away; past it new publishes are dropped. Default 10 000. */
  maxQueue?: number;
  /** The same bound in bytes. Default 16 MiB. */
  maxQueueBytes?: number;
  /** Milliseconds between announcements of this server's subscriber counts, or false to keep no cluster-wide counts. Default 2000. */
  presenceInterval?: number | false;
  /**
   * Milliseconds with publishes in flight and none confirmed after which the broker counts as
   * stalled (frozen, or too overloaded to answer) although its connection is open: `ready()`
   * is false (`/readyz` 503) until it answers again. False: never. Default 5000.
   */
  stallTimeout?: number | false;
  /** Where connection changes and dropped messages are logged. Default: the app's logger. */
  logger?: Logger;
}

export interface BrokerBusStats {
  connected: boolean;
  /** Connected, but nothing confirmed for `stallTimeout` ms with publishes in flight. */
  stalled: boolean;
  /** Publishes sent to the broker (confirmed or not). */
  published: number;
  /** Frames that arrived on topic channels (before any check): what interest tracking keeps low. */
  received: number;
  /** Messages from other servers handed to local subscribers. */
  delivered: number;
  /** Publishes waiting for the broker, and their bytes. */
  queued: number;
  queuedBytes: number;
  inFlight: number;
  /** Publishes dropped because the queue was full or the message too big. */
  dropped: number;
  /** Publishes lost with a connection (sent, never confirmed). */
  failed: number;
  /** Arrivals refused (bad frame, too big, invalid UTF-8). */
  rejected: number;
  /** Topics this server is subscribed to on the broker. */
  topics: number;
}

const KNOWN = new Set(['maxMessageSize', 'maxInFlight', 'maxQueue', 'maxQueueBytes', 'presenceInterval', 'stallTimeout', 'logger']);

/** Checks the options common to every broker bus; `extra` are the transport's own option names. */
export function brokerBusOptions(
  where: string,
  options: Record<string, unknown>,
  extra: readonly string[],
): Required<Omit<BrokerBusOptions, 'logger'>> & { logger: Logger | undefined } {
  checkKnownKeys(where, options, [...KNOWN, ...extra]);
  const int = (name: keyof BrokerBusOptions, fallback: number): number => {
    const v = options[name] ?? fallback;
    if (!Number.isSafeInteger(v) || (v as number) < 1) throw new TypeError(`${where}: ${name} must be a positive integer`);
    return v as number;
  };
  const presence = options.presenceInterval ?? 2000;
  if (presence !== false && (!Number.isSafeInteger(presence) || (presence as number) < 10))
    throw new TypeError(`${where}: presenceInterval must be an integer >= 10 (milliseconds) or false`);
  const stall = options.stallTimeout ?? 5000;
  if (stall !== false && (!Number.isSafeInteger(stall) || (stall as number) < 100))
    throw new TypeError(`${where}: stallTimeout must be an integer >= 100 (milliseconds) or false`);
  const logger = options.logger as Logger | undefined;
  if (logger !== undefined && (typeof logger !== 'object' || logger === null || typeof logger.error !== 'function'))
    throw new TypeError(`${where}: logger must be a Logger (error, warn, info, debug)`);
  return {
    maxMessageSize: int('maxMessageSize', 1 << 20),
    maxInFlight: int('maxInFlight', 1024),
    maxQueue: int('maxQueue', 10_000),
    maxQueueBytes: int('maxQueueBytes', 16 << 20),
    presenceInterval: presence as number | false,
    stallTimeout: stall as number | false,
    logger,
  };
}
