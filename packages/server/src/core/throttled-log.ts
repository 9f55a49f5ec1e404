// Log lines that can come in floods: warnings about what clients send wrong (a frame too big,
// a refused upgrade, ambiguous framing) and errors repeated for every client while a store is
// down. Each gets its log line (docs/logging.md), but not one per event under a flood: a
// client sending thousands of bad frames a second would otherwise turn the log into the
// attack's amplifier (the logger's CPU, the disk, the log pipeline), and a Redis outage would
// bury what else happened. Per logger and message, the first `burst` lines of each window
// are written; the rest are counted, and one line at the end of the window says how many were
// left out (`suppressed`).
import type { Logger } from './logger.ts';

export interface ThrottledLogOptions {
  /** Lines of one message written per window. Default 20. */
  readonly burst?: number;
  /** The window, ms. Default 10 s. */
  readonly windowMs?: number;
}

type Level = 'warn' | 'error';

interface Kind {
  readonly level: Level;
  windowStart: number;
  written: number;
  suppressed: number;
  timer: NodeJS.Timeout | null;
}

/** Distinct messages tracked per logger; past it (messages built from input?) lines are written unthrottled rather than tracked without bound. */
const MAX_KINDS = 256;

export class ThrottledLog {
  private readonly kinds = new Map<string, Kind>();
  private readonly burst: number;
  private readonly windowMs: number;
  private readonly logger: Logger;

  constructor(logger: Logger, options: ThrottledLogOptions = {}) {
    this.logger = logger;
    this.burst = options.burst ?? 20;
    this.windowMs = options.windowMs ?? 10_000;
  }

  write(level: Level, fields: object, msg: string, now = Date.now()): void {
    let kind = this.kinds.get(msg);
    if (kind === undefined) {
      if (this.kinds.size >= MAX_KINDS) return this.logger[level](fields, msg);
      kind = { level, windowStart: now, written: 0, suppressed: 0, timer: null };
      this.kinds.set(msg, kind);
    }
    if (now - kind.windowStart >= this.windowMs && kind.timer === null) {
      kind.windowStart = now;
      kind.written = 0;
    }
    if (kind.written < this.burst) {
      kind.written++;
      return this.logger[kind.level](fields, msg);
    }
    kind.suppressed++;
    // Unref'd: a summary never keeps the process alive; one timer per message in a flood, none otherwise.
    kind.timer ??= setTimeout(() => this.summarize(msg, kind), Math.max(0, kind.windowStart + this.windowMs - now)).unref();
  }

  private summarize(msg: string, kind: Kind): void {
    this.logger[kind.level]({ suppressed: kind.suppressed, windowMs: this.windowMs }, msg);
    kind.timer = null;
    kind.suppressed = 0;
    kind.windowStart = Date.now();
    kind.written = 0;
  }
}

const byLogger = new WeakMap<Logger, ThrottledLog>();

/**
 * A line throttled per logger and message (see above). The message is the kind: keep it a
 * fixed string and put what varies in `fields`.
 */
export function logThrottled(logger: Logger, level: Level, fields: object, msg: string): void {
  let log = byLogger.get(logger);
  if (log === undefined) byLogger.set(logger, (log = new ThrottledLog(logger)));
  log.write(level, fields, msg);
}

/** A warning about bad input from a client (a refusal): throttled. */
export function warnBadInput(logger: Logger, fields: object, msg: string): void {
  logThrottled(logger, 'warn', fields, msg);
}
