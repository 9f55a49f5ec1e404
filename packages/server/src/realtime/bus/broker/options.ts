// The options every broker bus takes (redisBus(), natsBus()), checked once at construction.
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
  /** Where connection changes and dropped messages are logged. Default: the app's logger. */
  logger?: Logger;
}

const KNOWN = new Set(['maxMessageSize', 'maxInFlight', 'maxQueue', 'maxQueueBytes', 'presenceInterval', 'logger']);

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
  const logger = options.logger as Logger | undefined;
  if (logger !== undefined && (typeof logger !== 'object' || logger === null || typeof logger.error !== 'function'))
    throw new TypeError(`${where}: logger must be a Logger (error, warn, info, debug)`);
  return {
    maxMessageSize: int('maxMessageSize', 1 << 20),
    maxInFlight: int('maxInFlight', 1024),
    maxQueue: int('maxQueue', 10_000),
    maxQueueBytes: int('maxQueueBytes', 16 << 20),
    presenceInterval: presence as number | false,
    logger,
  };
}
