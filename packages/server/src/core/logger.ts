import { isatty } from 'node:tty';

/** The subset of pino's interface Tachyon calls. pino, console-like wrappers and test spies fit. */
export interface Logger {
  error(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  debug(obj: object | string, msg?: string): void;
  /** A logger whose lines carry `bindings` (pino's child()). Optional: Tachyon wraps loggers without it. */
  child?(bindings: Record<string, unknown>): Logger;
}

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

const noop = () => {};
const ORDER = { error: 0, warn: 1, info: 2, debug: 3 } as const;

/** Says nothing: `new App({ logger: silentLogger })` turns Tachyon's logging off. */
export const silentLogger: Logger = { error: noop, warn: noop, info: noop, debug: noop };

/** One JSON line per entry, errors and warnings on stderr, the rest on stdout: for apps that want logs without pino. */
export function jsonLogger(level: LogLevel = 'info', bindings: Record<string, unknown> = {}): Logger {
  return lineLogger(level, bindings, jsonLine, (name) => (name === 'error' || name === 'warn' ? process.stderr : process.stdout));
}

export interface StderrLoggerOptions {
  /** Entries below it are dropped. Default 'info'. */
  level?: LogLevel;
  /** 'pretty': readable lines, stacks below them; 'json': one JSON object a line. Default: pretty when stderr is a terminal or NODE_ENV=development, else json. */
  format?: 'pretty' | 'json';
}

/** Every entry on stderr, readable or as JSON lines (see StderrLoggerOptions). */
export function stderrLogger(options: StderrLoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  if (!(level in ORDER)) throw new TypeError(`stderrLogger(): level must be error, warn, info or debug, got ${JSON.stringify(level)}`);
  const format = options.format ?? (isatty(2) || process.env.NODE_ENV === 'development' ? 'pretty' : 'json');
  if (format !== 'pretty' && format !== 'json')
    throw new TypeError(`stderrLogger(): format must be 'pretty' or 'json', got ${JSON.stringify(format)}`);
  const color = format === 'pretty' && isatty(2) && process.env.NO_COLOR === undefined;
  return lineLogger(level, {}, format === 'json' ? jsonLine : color ? prettyColorLine : prettyLine, () => process.stderr);
}

let fallback: Logger | undefined;

/**
 * The logger of an App (or cluster()) given none: a process-wide stderrLogger, so that a
 * handler that throws, or a response answered twice, is never silent. `TACHYON_LOG` sets its
 * level: error, warn, info (default: warnings, errors and the `listening` line), debug, or
 * silent.
 */
export function defaultLogger(): Logger {
  if (fallback !== undefined) return fallback;
  const env = process.env.TACHYON_LOG?.trim().toLowerCase();
  if (env === 'silent') return (fallback = silentLogger);
  return (fallback = stderrLogger({ level: env !== undefined && env in ORDER ? (env as LogLevel) : 'info' }));
}

type Format = (level: LogLevel, bindings: Record<string, unknown>, obj: object | string, msg: string | undefined) => string;

function lineLogger(
  level: LogLevel,
  bindings: Record<string, unknown>,
  format: Format,
  out: (level: LogLevel) => NodeJS.WritableStream,
): Logger {
  const make = (name: LogLevel) =>
    ORDER[name] > ORDER[level] ? noop : (obj: object | string, msg?: string) => void out(name).write(format(name, bindings, obj, msg));
  return {
    error: make('error'),
    warn: make('warn'),
    info: make('info'),
    debug: make('debug'),
    child: (more) => lineLogger(level, { ...bindings, ...more }, format, out),
  };
}

function jsonLine(level: LogLevel, bindings: Record<string, unknown>, obj: object | string, msg: string | undefined): string {
  const entry = typeof obj === 'string' ? { msg: obj } : { ...serialize(obj), ...(msg === undefined ? {} : { msg }) };
  const record = { level, time: Date.now(), ...bindings, ...entry };
  try {
    return JSON.stringify(record) + '\n';
  } catch {
    // A field JSON cannot hold (a cycle, a BigInt): the line still goes out, with its message.
    return JSON.stringify({ level, time: record.time, msg: (entry as { msg?: unknown }).msg, unserializable: true }) + '\n';
  }
}

const LABEL = { error: 'ERROR', warn: 'WARN ', info: 'INFO ', debug: 'DEBUG' } as const;
const COLOR = { error: '\x1b[31m', warn: '\x1b[33m', info: '\x1b[36m', debug: '\x1b[90m' } as const;

const prettyLine: Format = (level, bindings, obj, msg) => pretty(LABEL[level], bindings, obj, msg);
const prettyColorLine: Format = (level, bindings, obj, msg) => pretty(`${COLOR[level]}${LABEL[level]}\x1b[0m`, bindings, obj, msg);

/** `12:00:00.123 ERROR request failed method=GET route=/users/:id`, then the error's stack, indented. */
function pretty(label: string, bindings: Record<string, unknown>, obj: object | string, msg: string | undefined): string {
  const fields: Record<string, unknown> = typeof obj === 'string' ? { ...bindings } : { ...bindings, ...obj };
  const text = typeof obj === 'string' ? obj : (msg ?? '');
  let line = `${new Date().toISOString().slice(11, 23)} ${label} ${text}`;
  let stack = '';
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (value instanceof Error) stack += `\n    ${(value.stack ?? `${value.name}: ${value.message}`).replace(/\n/g, '\n    ')}`;
    else if (typeof value === 'string' && value.length > 3 && text.includes(value))
      continue; // already in the message (the listening URL)
    else line += ` ${key}=${typeof value === 'string' && /^[^\s"=]+$/.test(value) ? value : safeJson(value)}`;
  }
  return `${line}${stack}\n`;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * A logger whose lines carry `bindings`: the logger's own child() when it has one (pino),
 * else a wrapper that adds them to each entry. The silent logger stays silent, for free.
 */
export function childLogger(logger: Logger, bindings: Record<string, unknown>): Logger {
  if (logger === silentLogger) return silentLogger;
  if (typeof logger.child === 'function') return logger.child(bindings);
  const wrap = (fn: Logger['info']) => (obj: object | string, msg?: string) =>
    typeof obj === 'string' ? fn.call(logger, { ...bindings }, obj) : fn.call(logger, { ...bindings, ...obj }, msg);
  return {
    error: wrap(logger.error),
    warn: wrap(logger.warn),
    info: wrap(logger.info),
    debug: wrap(logger.debug),
    child: (more) => childLogger(logger, { ...bindings, ...more }),
  };
}

function serialize(obj: object): object {
  const out: Record<string, unknown> = { ...obj };
  const err = (obj as { err?: unknown }).err;
  if (err instanceof Error) out.err = { type: err.name, message: err.message, stack: err.stack };
  return out;
}
