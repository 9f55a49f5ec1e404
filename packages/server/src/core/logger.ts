/** The subset of pino's interface Tachyon calls. pino, console-like wrappers and test spies fit. */
export interface Logger {
  error(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  debug(obj: object | string, msg?: string): void;
  /** A logger whose lines carry `bindings` (pino's child()). Optional: Tachyon wraps loggers without it. */
  child?(bindings: Record<string, unknown>): Logger;
}

const noop = () => {};

/** The default: Tachyon says nothing unless you give it a logger. */
export const silentLogger: Logger = { error: noop, warn: noop, info: noop, debug: noop };

/** One JSON line per entry on stderr/stdout, for apps that want logs without pino. */
export function jsonLogger(level: 'error' | 'warn' | 'info' | 'debug' = 'info', bindings: Record<string, unknown> = {}): Logger {
  const order = { error: 0, warn: 1, info: 2, debug: 3 } as const;
  const make = (name: keyof typeof order) =>
    order[name] > order[level]
      ? noop
      : (obj: object | string, msg?: string) => {
          const entry = typeof obj === 'string' ? { msg: obj } : { ...serialize(obj), ...(msg === undefined ? {} : { msg }) };
          const line = JSON.stringify({ level: name, time: Date.now(), ...bindings, ...entry }) + '\n';
          (name === 'error' || name === 'warn' ? process.stderr : process.stdout).write(line);
        };
  return { error: make('error'), warn: make('warn'), info: make('info'), debug: make('debug'), child: (more) => jsonLogger(level, { ...bindings, ...more }) };
}

/**
 * A logger whose lines carry `bindings`: the logger's own child() when it has one (pino),
 * else a wrapper that adds them to each entry. The silent logger stays silent, for free.
 */
export function childLogger(logger: Logger, bindings: Record<string, unknown>): Logger {
  if (logger === silentLogger) return silentLogger;
  if (typeof logger.child === 'function') return logger.child(bindings);
  const wrap = (fn: Logger['info']) => (obj: object | string, msg?: string) => (typeof obj === 'string' ? fn.call(logger, { ...bindings }, obj) : fn.call(logger, { ...bindings, ...obj }, msg));
  return { error: wrap(logger.error), warn: wrap(logger.warn), info: wrap(logger.info), debug: wrap(logger.debug), child: (more) => childLogger(logger, { ...bindings, ...more }) };
}

function serialize(obj: object): object {
  const out: Record<string, unknown> = { ...obj };
  const err = (obj as { err?: unknown }).err;
  if (err instanceof Error) out.err = { type: err.name, message: err.message, stack: err.stack };
  return out;
}
