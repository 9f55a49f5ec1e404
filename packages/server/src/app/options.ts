// AppOptions: what `new App(options)` accepts, checked once and resolved into the settings
// every request reads. Bad values fail here, with the option's name, not at the first request.
import { resolveCompression, type Compression, type CompressionOptions } from '../http/compression.ts';
import { checkTlsKeys, type TlsOptions } from '../serving/tls.ts';
import type { Bus } from '../realtime/bus/index.ts';
import { defaultLogger, type Logger } from '../core/logger.ts';
import { checkKnownKeys } from '../core/options-check.ts';
import { resolveRequestId, type RequestIdOptions } from '../http/observe/request-id.ts';
import { resolveAccessLog, type AccessLogOptions } from '../http/observe/access-log.ts';
import { DEFAULT_BODY_LIMIT, DEFAULT_REQUEST_TIMEOUT, type Settings, type TrustProxy } from '../core/settings.ts';

export interface AppOptions {
  /**
   * Largest request body in bytes; 413 past it. Default 1 MiB. JSON parsing holds the event
   * loop for up to ~50 ms per MiB (docs/request.md, "Body limits and their cost"): raise it
   * per route, not here.
   */
  bodyLimit?: number;
  /** Secret(s) for signed cookies. The first signs; all verify (rotation). */
  cookieSecret?: string | string[];
  /** How far to trust X-Forwarded-For / X-Forwarded-Proto. Default false. */
  trustProxy?: TrustProxy;
  /**
   * pino-compatible logger. Default: `defaultLogger()`, lines on stderr (readable in a
   * terminal or under NODE_ENV=development, JSON otherwise; docs/logging.md). `silentLogger`
   * turns logging off.
   */
  logger?: Logger;
  /**
   * Every request gets `req.id`, sent back in `X-Request-Id` and carried by `req.log`'s lines;
   * taken from the incoming header when trusted (docs/logging.md). Default off: ids are then
   * made only when `req.id` or `req.log` is read.
   */
  requestId?: boolean | RequestIdOptions;
  /** One log line per request (method, path, route, status, bytes, duration) through `req.log`. Default off. */
  accessLog?: boolean | AccessLogOptions;
  /** Milliseconds before a request nobody answered gets 503. Default 30 000; 0 disables. */
  requestTimeout?: number;
  /**
   * Largest request head (request line + headers) uWS accepts; 431 past it. Process-wide:
   * the first App sets it. Default 16 KiB (uWS alone: 4 KiB).
   */
  maxHeaderSize?: number;
  /** `/users/` vs `/users`: 'ignore' (both match, default), 'strict', or 'redirect' (308 to the declared form). */
  trailingSlash?: 'ignore' | 'strict' | 'redirect';
  /** Include error messages and stacks in 500 answers. Default: NODE_ENV === 'development'. */
  exposeErrors?: boolean;
  /**
   * Check every reply of a route with `response` schemas against the schema of its status
   * (docs/routing.md, "Reply schemas"): a reply that does not match is logged with the route
   * and answered 500 instead. For development and tests; it parses each such reply again.
   * Default false (off: no work per request).
   */
  validateResponses?: boolean;
  /**
   * Validate with Zod's generated parser (`z.compile`, Zod 4.6 and later): every Zod schema
   * of a route or a WebSocket event is compiled once at startup, about 20 times faster than
   * `safeParse` on a 1 KB object, with the same results and the same errors (docs/validation.md,
   * "Compiled schemas"). Schemas of another Zod version than the one Tachyon imports, or ones
   * Zod cannot compile, run as they are. Default true.
   */
  compileSchemas?: boolean;
  /** Compress responses (brotli/gzip) for every route; routes override with `compress`. Default off. */
  compression?: boolean | CompressionOptions;
  /** Serve HTTPS: key and cert as PEM text or file paths; `sni` for extra hostnames. */
  tls?: TlsOptions;
  /**
   * Coalesce `app.publish()` calls: the envelopes published to a topic go out as one frame, a
   * JSON array (docs/protocol.md, "Batches"). `true`: those of one event-loop iteration;
   * `{ tick: ms }` (an integer from 1 to 1000): those of one tick, held at most `tick` ms (a
   * game's state updates, docs/realtime.md, "For games"). Per-topic order is kept. Clients must
   * understand batches (`@tachyon/client` does). Default false.
   */
  coalescePublishes?: boolean | { tick: number };
  /**
   * Where publishes go beyond this process: worker threads, Redis, NATS (docs/realtime.md,
   * "Buses"). Default: the in-process bus (nothing beyond this process).
   */
  bus?: Bus;
  /**
   * Presence across processes (docs/presence.md): `heartbeat` is the milliseconds between a
   * process's snapshots of its members on the bus; a process not heard from for three
   * heartbeats has its members removed. Default 2000 (min 50).
   */
  presence?: { heartbeat?: number };
}

/** Every key of AppOptions: a key added to the type and not here fails to compile. */
const APP_KEYS = Object.keys({
  bodyLimit: true,
  cookieSecret: true,
  trustProxy: true,
  logger: true,
  requestId: true,
  accessLog: true,
  requestTimeout: true,
  maxHeaderSize: true,
  trailingSlash: true,
  exposeErrors: true,
  validateResponses: true,
  compileSchemas: true,
  compression: true,
  tls: true,
  coalescePublishes: true,
  bus: true,
  presence: true,
} satisfies Record<keyof AppOptions, true>);

export interface ListenOptions {
  port?: number;
  host?: string;
  /**
   * Close gracefully on SIGTERM and SIGINT (or the signals listed), then re-raise the
   * signal so the process ends the way it would have. Default false.
   */
  signals?: boolean | NodeJS.Signals[];
  /** Grace period for signal-triggered shutdowns, in ms. Default 10 000. */
  shutdownTimeout?: number;
}

const LISTEN_KEYS = Object.keys({ port: true, host: true, signals: true, shutdownTimeout: true } satisfies Record<
  keyof ListenOptions,
  true
>);

export interface ResolvedOptions {
  /** Everything but the runtime state, which the App adds (app.ts). */
  settings: Omit<Settings, 'state'>;
  trailingSlash: 'ignore' | 'strict' | 'redirect';
  maxHeaderSize: number | undefined;
  compression: Compression | null;
  tls: TlsOptions | undefined;
  /** false, true (per loop iteration) or the tick in milliseconds. */
  coalescePublishes: boolean | number;
  bus: Bus | undefined;
  presenceHeartbeat: number;
}

export function resolveAppOptions(options: AppOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError('App options must be an object');
  const o = options;
  checkKnownKeys('new App()', o, APP_KEYS);
  if (o.bodyLimit !== undefined && !(Number.isInteger(o.bodyLimit) && o.bodyLimit >= 0))
    throw new TypeError('bodyLimit must be a non-negative integer');
  if (o.requestTimeout !== undefined && !(Number.isFinite(o.requestTimeout) && o.requestTimeout >= 0))
    throw new TypeError('requestTimeout must be >= 0 ms');
  if (o.maxHeaderSize !== undefined && !(Number.isInteger(o.maxHeaderSize) && o.maxHeaderSize >= 1024 && o.maxHeaderSize <= 1 << 20)) {
    throw new TypeError('maxHeaderSize must be an integer from 1024 to 1048576 bytes');
  }
  if (o.trailingSlash !== undefined && !['ignore', 'strict', 'redirect'].includes(o.trailingSlash))
    throw new TypeError("trailingSlash must be 'ignore', 'strict' or 'redirect'");
  const secrets = o.cookieSecret === undefined ? [] : Array.isArray(o.cookieSecret) ? o.cookieSecret : [o.cookieSecret];
  if (secrets.some((s) => typeof s !== 'string' || s.length === 0))
    throw new TypeError('cookieSecret must be a non-empty string or array of them');
  if (o.validateResponses !== undefined && typeof o.validateResponses !== 'boolean')
    throw new TypeError('validateResponses must be a boolean');
  if (o.compileSchemas !== undefined && typeof o.compileSchemas !== 'boolean') throw new TypeError('compileSchemas must be a boolean');
  const tp = o.trustProxy ?? false;
  if (!(typeof tp === 'boolean' || typeof tp === 'function' || (Number.isInteger(tp) && tp >= 0)))
    throw new TypeError('trustProxy must be a boolean, a hop count or a function');
  const settings: Omit<Settings, 'state'> = {
    bodyLimit: o.bodyLimit ?? DEFAULT_BODY_LIMIT,
    cookieSecrets: Object.freeze([...secrets]),
    trustProxy: tp,
    logger: o.logger ?? defaultLogger(),
    requestTimeout: o.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT,
    exposeErrors: o.exposeErrors ?? process.env.NODE_ENV === 'development',
    validateResponses: o.validateResponses ?? false,
    compileSchemas: o.compileSchemas ?? true,
    requestId: resolveRequestId(o.requestId),
    accessLog: resolveAccessLog(o.accessLog),
  };
  if (
    o.logger !== undefined &&
    (typeof o.logger !== 'object' ||
      o.logger === null ||
      !['error', 'warn', 'info', 'debug'].every((l) => typeof (o.logger as unknown as Record<string, unknown>)[l] === 'function'))
  ) {
    throw new TypeError('logger must have error, warn, info and debug methods (pino fits)');
  }
  if (o.tls !== undefined && (typeof o.tls !== 'object' || o.tls === null)) throw new TypeError('tls must be an object with key and cert');
  if (o.tls !== undefined) checkTlsKeys('new App(): tls', o.tls);
  const bus = o.bus;
  if (
    bus !== undefined &&
    (typeof bus !== 'object' ||
      bus === null ||
      typeof bus.publish !== 'function' ||
      typeof bus.interest !== 'function' ||
      typeof bus.start !== 'function' ||
      typeof bus.close !== 'function')
  ) {
    throw new TypeError('bus must implement start, publish, interest and close');
  }
  const presence = o.presence;
  if (presence !== undefined && (typeof presence !== 'object' || presence === null))
    throw new TypeError('presence must be an object ({ heartbeat })');
  if (presence !== undefined) checkKnownKeys('new App(): presence', presence, ['heartbeat']);
  const heartbeat = presence?.heartbeat ?? 2000;
  if (!Number.isSafeInteger(heartbeat) || heartbeat < 50 || heartbeat > 600_000)
    throw new TypeError('presence.heartbeat must be an integer from 50 to 600000 (milliseconds)');
  return {
    presenceHeartbeat: heartbeat,
    settings,
    trailingSlash: o.trailingSlash ?? 'ignore',
    maxHeaderSize: o.maxHeaderSize,
    compression: resolveCompression(o.compression, null),
    tls: o.tls,
    coalescePublishes: resolveCoalesce(o.coalescePublishes),
    bus,
  };
}

/** `coalescePublishes`: false, true, or `{ tick }` resolved to its milliseconds. */
function resolveCoalesce(option: AppOptions['coalescePublishes']): boolean | number {
  if (option === undefined || typeof option === 'boolean') return option ?? false;
  const fail = (): never => {
    throw new TypeError(
      `coalescePublishes must be true, false or { tick: ms } with an integer tick from 1 to 1000, got ${describe(option)}`,
    );
  };
  if (typeof option !== 'object' || option === null) return fail();
  checkKnownKeys('new App(): coalescePublishes', option, ['tick']);
  const tick = option.tick;
  if (!Number.isInteger(tick) || tick < 1 || tick > 1000) return fail();
  return tick;
}

/** A bad option value, for its error message. */
function describe(value: unknown): string {
  if (typeof value === 'function') return 'a function';
  if (typeof value !== 'object' || value === null) return typeof value === 'string' ? JSON.stringify(value) : String(value);
  try {
    return JSON.stringify(value);
  } catch {
    return 'an object';
  }
}

/** The mistakes Express habits bring to listen(), each with the fix in its message. */
export function checkListenArguments(port: unknown, second: unknown, count: number): void {
  if (typeof port === 'function' || typeof second === 'function' || count > 2) {
    throw new TypeError('listen() takes no callback: it returns a promise. Use `const server = await app.listen(port)` (or .then())');
  }
  if (typeof port === 'string') {
    throw new TypeError(
      `listen() needs the port as a number, got the string ${JSON.stringify(port)}: use app.listen(Number(${/^\d+$/.test(port) ? port : 'process.env.PORT'}))`,
    );
  }
  if (port !== undefined && typeof port !== 'number' && (typeof port !== 'object' || port === null)) {
    throw new TypeError(`listen() takes a port number or { port, host }, got ${port === null ? 'null' : typeof port}`);
  }
  if (second !== undefined && typeof second !== 'string' && (typeof second !== 'object' || second === null)) {
    throw new TypeError(`listen(port, host): host must be a string or options object, got ${second === null ? 'null' : typeof second}`);
  }
  for (const o of [port, second]) if (typeof o === 'object' && o !== null) checkKnownKeys('listen()', o, LISTEN_KEYS);
}

/**
 * listen()'s log line, `listening on http://localhost:3000`, with the address a browser can
 * open (a wildcard host is named `localhost`, "every interface"); cluster() adds its workers.
 */
export function listeningLog(host: string, port: number, tls: boolean, workers?: number): [Record<string, unknown>, string] {
  const wildcard = host === '0.0.0.0' || host === '::' || host === '';
  const name = wildcard ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  const url = `${tls ? 'https' : 'http'}://${name}:${port}`;
  const where = wildcard ? ' (every interface)' : '';
  const pool = workers === undefined ? '' : `, ${workers} worker${workers === 1 ? '' : 's'}`;
  return [{ url, host, port, ...(workers === undefined ? {} : { workers }) }, `listening on ${url}${where}${pool}`];
}
