// What a history store does (docs/history.md, "Stores"): give every publish on a history
// topic its position (a per-topic `offset` that grows by one, and the store's `epoch`), keep
// the last `size` messages for at most `ttl` ms, and read back what came after a position.
// The memory store answers synchronously, so the replay and the switch to live traffic
// happen in one turn; a store on a server (Redis) answers with promises.

import type { Logger } from '../../core/logger.ts';

/** Where a client is in a topic's history: the last offset it got, in which epoch. */
export interface Position {
  readonly offset: number;
  readonly epoch: string;
}

/** A publish the store kept: its position, and the envelope that carries it (docs/protocol.md). */
export interface Appended extends Position {
  readonly envelope: string;
}

/** What a subscribe asks of the history: what came after `since` (recovery), or the `last` N messages. */
export interface HistoryRequest {
  readonly since?: Position;
  readonly last?: number;
}

/** Why a recovery was refused (logged, and documented in docs/history.md). */
export type Unrecoverable = 'epoch' | 'window' | 'ahead';

export interface HistoryRead extends Position {
  /** With `since`: true when every message after it is in `envelopes`; false when some are lost (see `reason`). */
  readonly recovered: boolean;
  readonly reason?: Unrecoverable;
  /** Envelopes in offset order (empty when not recovered). */
  readonly envelopes: readonly string[];
}

export interface HistoryStore {
  /** Keeps a publish and gives it its position. `json` is the event's data, serialized (undefined: no data). */
  append(topic: string, event: string, json: string | undefined, options: Readonly<HistoryOptions>): Appended | Promise<Appended>;
  /** Reads for a subscribe. Without since or last: the current position only. */
  read(topic: string, request: HistoryRequest, options: Readonly<HistoryOptions>): HistoryRead | Promise<HistoryRead>;
  /** Optional: how many messages are kept for `topic` now (the dashboard shows it; stores that cannot tell omit it). */
  kept?(topic: string, options: Readonly<HistoryOptions>): number | Promise<number>;
  /** True when every server of the app sees the same history (a store on a server): required with a bus. */
  readonly shared: boolean;
  /** Called when the app closes. */
  close?(): void | Promise<void>;
  /** Optional: the app's logger, handed over when `app.topic()` declares a pattern with this store (where the store logs its own trouble). */
  useLogger?(logger: Logger): void;
}

/** Decides a read against what a store keeps: `oldest` is the first offset still kept (latest + 1 when none). */
export function judge(since: Position, epoch: string, latest: number, oldest: number): Unrecoverable | null {
  if (since.epoch !== epoch) return 'epoch';
  if (since.offset > latest) return 'ahead';
  if (since.offset + 1 < oldest) return 'window';
  return null;
}

/** History options of a topic pattern (`app.topic(pattern, { history })`, checked in options.ts). */
export interface HistoryOptions {
  /** Most messages kept per topic (the oldest go first). */
  size: number;
  /** Milliseconds a message is kept. Default: kept until `size` pushes it out. */
  ttl?: number;
  /**
   * Where the history lives. Default: this process's memory (one process; a restart loses
   * it). Behind a bus (cluster(), Redis, NATS), a shared store: `redisHistory()` from
   * @tachyon/redis.
   */
  store?: HistoryStore;
}
