// What a history store has sent to Redis and not had answered yet. A Redis that is frozen
// (SIGSTOP, a long fork, a saturated host) keeps its connection open and answers nothing:
// node-redis then holds every command until the reply, and a publish on a history topic is
// one append. Without a bound, memory grew with the publish rate × the freeze. Past the
// bound a new command is refused at once: an append then goes out live without a position
// (the store's failure path in the server's history engine), as when Redis is unreachable,
// which is the bus outbox's tail drop (docs/scaling.md, "Delivery semantics") applied to history.
import type { Logger } from '@tachyon/server';

export interface PendingLimits {
  /** Commands sent and not answered. */
  maxPending: number;
  /** Their payload bytes (the appended data). */
  maxPendingBytes: number;
}

export class PendingCommands {
  /** Commands waiting for their reply, and their payload bytes. */
  count = 0;
  bytes = 0;
  /** Refused because the bound was reached (since start). */
  overflowed = 0;
  /** Refusals of the current episode (from the first refusal until the queue is half empty), or -1 when none. */
  private episode = -1;
  private episodeStart = 0;
  private readonly limits: PendingLimits;
  private readonly logger: () => Logger;

  constructor(limits: PendingLimits, logger: () => Logger) {
    this.limits = limits;
    this.logger = logger;
  }

  /** Admits a command of `bytes` payload bytes, or counts and refuses it (false) when the bound is reached. */
  admit(bytes: number): boolean {
    const { maxPending, maxPendingBytes } = this.limits;
    // One command is always admitted: a single message bigger than the byte bound still goes.
    if (this.count > 0 && (this.count >= maxPending || this.bytes + bytes > maxPendingBytes)) {
      this.overflowed++;
      if (this.episode < 0) {
        this.episode = 0;
        this.episodeStart = Date.now();
        // Once per episode, not per refusal: a frozen Redis under traffic refuses thousands.
        this.logger().warn(
          { pending: this.count, pendingBytes: this.bytes, maxPending, maxPendingBytes },
          'redis history: Redis answers nothing and the pending appends reached their bound: publishes go out live without a position, not kept in the history, until it answers',
        );
      }
      this.episode++;
      return false;
    }
    this.count++;
    this.bytes += bytes;
    return true;
  }

  /** A command was answered (or failed). */
  done(bytes: number): void {
    this.count--;
    this.bytes -= bytes;
    // The episode ends once Redis has worked through half of the bound: no log line per
    // refusal when a slow Redis keeps the queue at its edge.
    if (this.episode >= 0 && this.count <= this.limits.maxPending / 2 && this.bytes <= this.limits.maxPendingBytes / 2) {
      this.logger().info(
        { notKept: this.episode, ms: Date.now() - this.episodeStart, pending: this.count },
        `redis history: Redis answers again; ${this.episode} publishes were not kept (published live without a position)`,
      );
      this.episode = -1;
    }
  }
}
