// cluster(): one server on every core. The module that calls it runs in the primary thread
// and again in each worker thread; in a worker, cluster() runs the factory and serves (and
// never returns), in the primary it starts and supervises the workers (primary.ts). With 0 or
// 1 worker the app runs in this thread, without threads. See docs/cluster.md.
import { isMainThread, workerData } from 'node:worker_threads';
import type { App } from '../app/app.ts';
import { listenAcceptor } from '../app/acceptor.ts';
import { pickFreePort } from '../app/free-port.ts';
import { listeningLog } from '../app/options.ts';
import { resolveClusterOptions, type ClusterOptions, type ResolvedClusterOptions } from './options.ts';
import { Primary } from './primary.ts';
import { WORKER_MARK, type WorkerData } from './protocol.ts';
import { runWorker, type AppFactory } from './worker.ts';

export type { ClusterOptions } from './options.ts';
export type { AppFactory } from './worker.ts';

export interface ClusterServer {
  readonly port: number;
  readonly host: string;
  /** Worker threads serving the app (0: it runs in this thread). */
  readonly workers: number;
  /**
   * How the port is shared: 'acceptor' (one listen socket in the primary hands connections
   * to the workers), 'reuseport' (Linux: every worker listens, the kernel spreads
   * connections), or 'in-process'.
   */
  readonly mode: 'acceptor' | 'reuseport' | 'in-process';
  /** Open WebSocket connections over all workers. */
  readonly connections: number;
  /** Stops accepting, lets every worker finish its in-flight requests (up to `timeout` ms), closes WebSockets with 1001. */
  close(options?: { timeout?: number }): Promise<void>;
  /**
   * Drains worker `worker` and starts a fresh one in its place, as app.cluster.drain() does
   * from a worker (docs/cluster.md, "Draining a worker"). Rejects in-process (no worker threads).
   */
  drain(worker: number): Promise<void>;
}

/**
 * Runs `factory`'s App on several worker threads sharing one port, with pub/sub across them.
 * In a worker thread of the cluster it runs the factory instead and never resolves.
 */
export async function cluster(options: ClusterOptions, factory: AppFactory): Promise<ClusterServer> {
  if (typeof factory !== 'function') throw new TypeError('cluster() needs a factory function that returns an App');
  const data = isMainThread ? undefined : (workerData as Record<string, WorkerData> | null)?.[WORKER_MARK];
  if (data !== undefined) return runWorker(data, factory);
  const o = resolveClusterOptions(options);
  // cluster({ bus }) needs a primary to hold the broker connection: one worker thread at least.
  const threads = o.forceThreads || o.bus !== undefined;
  if (threads && o.workers === 0) o.workers = 1;
  return o.workers <= 1 && !threads ? inProcess(o, factory) : primary(o);
}

async function inProcess(o: ResolvedClusterOptions, factory: AppFactory): Promise<ClusterServer> {
  const app: App = await factory();
  if (typeof app?.listen !== 'function') throw new TypeError('cluster(): the factory must return an App');
  if (app.tls !== (o.tls !== undefined)) throw new Error('cluster(): the tls option of cluster() and of the App must agree');
  const server = await app.listen({
    port: o.port,
    host: o.host,
    signals: o.signals.length > 0 ? o.signals : false,
    shutdownTimeout: o.shutdownTimeout,
  });
  return {
    port: server.port,
    host: server.host,
    workers: 0,
    mode: 'in-process',
    get connections() {
      return app.connections;
    },
    close: (options = {}) => server.close({ timeout: options.timeout ?? o.shutdownTimeout }),
    drain: () => Promise.reject(new Error('cluster: drain() needs worker threads (this cluster runs the app in-process)')),
  };
}

async function primary(o: ResolvedClusterOptions): Promise<ClusterServer> {
  const entry = o.entry ?? process.argv[1];
  if (entry === undefined) throw new Error('cluster(): no main module to run in the workers; pass `entry`');
  const mode = o.reusePort ? 'reuseport' : 'acceptor';
  const acceptor = mode === 'acceptor' ? await listenAcceptor(o.port, o.host, o.tls) : null;
  const port = acceptor?.port ?? (o.port === 0 ? await pickFreePort(o.host) : o.port);
  const pool = new Primary(o, mode, port, acceptor, entry);
  try {
    await pool.start();
  } catch (err) {
    await pool.close(0);
    throw err;
  }
  let closing: Promise<void> | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    o.logger.info({ signal }, 'shutting down');
    // Re-raised once closed, so the process ends the way the signal would have ended it.
    void close().then(() => process.kill(process.pid, signal));
  };
  const close = (timeout = o.shutdownTimeout) => {
    for (const s of o.signals) process.removeListener(s, onSignal);
    return (closing ??= pool.close(timeout));
  };
  for (const s of o.signals) process.on(s, onSignal);
  const [fields, message] = listeningLog(o.host, port, o.tls !== undefined, o.workers);
  o.logger.info({ ...fields, mode }, message);
  return {
    port,
    host: o.host,
    workers: o.workers,
    mode,
    get connections() {
      return pool.openConnections;
    },
    close: (options = {}) => close(options.timeout),
    drain: (worker) => pool.drain(worker, 0),
  };
}
