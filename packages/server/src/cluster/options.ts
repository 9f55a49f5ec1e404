// cluster() options: checked once, with the option's name in the error.
import { availableParallelism } from 'node:os';
import { defaultLogger, type Logger } from '../core/logger.ts';
import { checkKnownKeys } from '../core/options-check.ts';
import { checkTlsKeys, type TlsOptions } from '../serving/tls.ts';
import type { Bus } from '../realtime/bus/index.ts';

export interface ClusterOptions {
  /**
   * Worker threads: a number, or 'auto' for `os.availableParallelism()`. The `WORKERS`
   * environment variable overrides it. 0 or 1 runs the app in this thread, without workers.
   * Default 'auto'.
   */
  workers?: number | 'auto';
  /** Default 0 (a free port; read it from `server.port`). */
  port?: number;
  /** Default 0.0.0.0. */
  host?: string;
  /** Serve HTTPS. Must agree with the App's own `tls` option (the factory's App must have one too). */
  tls?: TlsOptions;
  /**
   * Linux only: every worker listens on the port itself (SO_REUSEPORT) and the kernel spreads
   * connections, instead of one acceptor in the primary handing them out. Default false
   * (docs/cluster.md, "Two ways to share a port").
   */
  reusePort?: boolean;
  /** Close gracefully on SIGTERM and SIGINT (or the signals listed), then re-raise the signal. Default true. */
  signals?: boolean | NodeJS.Signals[];
  /** Grace period for in-flight requests when closing, in ms. Default 10 000. */
  shutdownTimeout?: number;
  /** A worker whose event loop has not turned for this long (ms) is replaced. Default 10 000; 0 disables. */
  stallTimeout?: number;
  /** A worker that has not started after this long (ms) fails startup. Default 30 000. */
  startTimeout?: number;
  /** First delay (ms) before restarting a worker that died; doubles up to 30 s while it keeps dying. Default 100. */
  restartDelay?: number;
  /** The module the workers run. Default: the main module (`process.argv[1]`), i.e. the file that called cluster(). */
  entry?: string | URL;
  /**
   * A broker bus (`redisBus()`, `natsBus()`) held by the primary, which relays for every worker:
   * one broker connection per process (docs/cluster.md, "With a broker"). The default is
   * instead a bus per worker: `new App({ bus })` in the factory. Not both.
   */
  bus?: Bus;
  /** @internal Worker threads even for `workers: 1` (bench/cluster.mjs measures what the cluster costs). */
  forceThreads?: boolean;
  /** The primary's logger (the listening line, worker deaths, restarts, shutdown). Workers log through their App's logger. Default: the App's default, on stderr (docs/logging.md). */
  logger?: Logger;
}

const KNOWN = Object.keys({
  workers: true,
  port: true,
  host: true,
  tls: true,
  reusePort: true,
  signals: true,
  shutdownTimeout: true,
  stallTimeout: true,
  startTimeout: true,
  restartDelay: true,
  entry: true,
  bus: true,
  forceThreads: true,
  logger: true,
} satisfies Record<keyof ClusterOptions, true>);

export interface ResolvedClusterOptions {
  workers: number;
  port: number;
  host: string;
  tls: TlsOptions | undefined;
  reusePort: boolean;
  signals: NodeJS.Signals[];
  shutdownTimeout: number;
  stallTimeout: number;
  startTimeout: number;
  restartDelay: number;
  entry: string | URL | undefined;
  logger: Logger;
  forceThreads: boolean;
  bus: Bus | undefined;
}

/** `WORKERS` wins over `workers`; 'auto' is the number of cores this process may use. */
export function resolveWorkers(option: number | 'auto' | undefined, env = process.env.WORKERS): number {
  const raw = env !== undefined && env.trim() !== '' ? env.trim() : (option ?? 'auto');
  const name = env !== undefined && env.trim() !== '' ? 'WORKERS' : 'workers';
  if (raw === 'auto') return availableParallelism();
  const n = typeof raw === 'number' ? raw : /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < 0 || n > 1024)
    throw new TypeError(`${name} must be 'auto' or an integer from 0 to 1024 (got ${JSON.stringify(raw)})`);
  return n;
}

const ms = (name: string, value: unknown, fallback: number): number => {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new TypeError(`${name} must be a number of ms >= 0`);
  return value;
};

export function resolveClusterOptions(options: ClusterOptions): ResolvedClusterOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError('cluster() options must be an object');
  const o = options;
  checkKnownKeys('cluster()', o, KNOWN);
  const port = o.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError(`Invalid port ${port}`);
  if (o.host !== undefined && (typeof o.host !== 'string' || o.host === '')) throw new TypeError('host must be a non-empty string');
  if (o.tls !== undefined && (typeof o.tls !== 'object' || o.tls === null)) throw new TypeError('tls must be an object with key and cert');
  if (o.tls !== undefined) checkTlsKeys('cluster(): tls', o.tls);
  if (o.reusePort !== undefined && typeof o.reusePort !== 'boolean') throw new TypeError('reusePort must be a boolean');
  if (o.reusePort && process.platform !== 'linux') throw new TypeError('reusePort needs Linux (SO_REUSEPORT balancing)');
  const signals =
    o.signals === undefined || o.signals === true ? (['SIGTERM', 'SIGINT'] as NodeJS.Signals[]) : o.signals === false ? [] : o.signals;
  if (!Array.isArray(signals)) throw new TypeError('signals must be a boolean or a list of signal names');
  if (
    o.bus !== undefined &&
    (typeof o.bus !== 'object' ||
      o.bus === null ||
      typeof o.bus.start !== 'function' ||
      typeof o.bus.publish !== 'function' ||
      typeof o.bus.interest !== 'function')
  )
    throw new TypeError('bus must be a Bus (redisBus(), natsBus())');
  if (o.entry !== undefined && typeof o.entry !== 'string' && !(o.entry instanceof URL))
    throw new TypeError('entry must be a path or a file URL');
  return {
    workers: resolveWorkers(o.workers),
    port,
    host: o.host ?? '0.0.0.0',
    tls: o.tls,
    reusePort: o.reusePort ?? false,
    signals,
    shutdownTimeout: ms('shutdownTimeout', o.shutdownTimeout, 10_000),
    stallTimeout: ms('stallTimeout', o.stallTimeout, 10_000),
    startTimeout: ms('startTimeout', o.startTimeout, 30_000),
    restartDelay: ms('restartDelay', o.restartDelay, 100),
    entry: o.entry,
    logger: o.logger ?? defaultLogger(),
    forceThreads: o.forceThreads === true,
    bus: o.bus,
  };
}
