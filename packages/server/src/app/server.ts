// A running server: listening on a socket (or fed by an acceptor in another thread), and its
// graceful close: stop accepting, let in-flight requests finish, ask WebSockets to go (1001),
// then close the bus, the uWS app and run the onClose hooks.
import type { InflightTracker } from '../http/tracker.ts';
import type { WsHub } from '../realtime/hub.ts';
import { CLOSE_GOING_AWAY } from '../realtime/protocol.ts';
import type { Settings } from '../core/settings.ts';
import { pickFreePort } from './free-port.ts';
import { CLOSE_SERVICE_RESTART } from './abort.ts';
import { loadUws, type UwsApp, type UwsListenSocket } from '../uws/index.ts';

export interface CloseOptions {
  /** ms in-flight requests get to finish (default 10 s); the rest are then dropped. */
  timeout?: number;
  /**
   * WebSockets are closed with 1012 (service restart: a client reconnects at once, to another
   * worker or server) instead of 1001 (going away). What draining one cluster worker uses.
   */
  restart?: boolean;
}

export interface Server {
  readonly port: number;
  readonly host: string;
  /** Stops accepting, lets in-flight requests finish (up to `timeout` ms, default 10 s), then closes every connection. */
  close(options?: CloseOptions): Promise<void>;
}

/** uWS refused the listen socket (address in use or not available). */
class ListenError extends Error {}

/** What a running server needs from its app. */
export interface Running {
  readonly settings: Settings;
  readonly hub: WsHub;
  readonly tracker: InflightTracker;
  readonly uws: UwsApp;
  /** Run after everything else closed, in reverse order, within the shutdown timeout; a throwing hook is logged. */
  readonly closeHooks: readonly (() => unknown)[];
  /** Run first when closing: other listen sockets stop accepting (app.request()'s internal port). */
  readonly stopAccepting?: () => void;
}

/** Listens on host:port with an exclusive port (no silent SO_REUSEPORT sharing), unless `shared`. */
function listenSocket(uws: UwsApp, host: string, port: number, shared: boolean): Promise<UwsListenSocket> {
  return new Promise((resolve, reject) => {
    // Exclusive: without it uWS sets SO_REUSEPORT and a second server on the same port
    // would silently share its traffic instead of failing. Shared is for cluster workers
    // that split one port on purpose (docs/cluster.md, "Two ways to share a port").
    uws.listen(host, port, shared ? 0 : loadUws().LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
      if (socket) resolve(socket);
      else reject(new ListenError(`Could not listen on ${host}:${port} (address in use or not available)`));
    });
  });
}

/**
 * Listens on host:port; port 0 picks a free port first (see free-port.ts) and, since another
 * process may take it in between, tries up to three ports.
 */
export async function listenOn(
  uws: UwsApp,
  host: string,
  requested: number,
  shared = false,
): Promise<{ socket: UwsListenSocket; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = requested === 0 ? await pickFreePort(host) : requested;
    try {
      return { socket: await listenSocket(uws, host, port, shared), port };
    } catch (err) {
      if (requested !== 0 || attempt >= 3 || !(err instanceof ListenError)) throw err;
    }
  }
}

/** The Server handle; `socket` is null when an acceptor in another thread feeds this app. */
export function makeServer(run: Running, socket: UwsListenSocket | null, host: string, port: number): Server {
  let closing: Promise<void> | undefined;
  return {
    port,
    host,
    close: (options = {}) => (closing ??= shutDown(run, socket, options.timeout ?? 10_000, options.restart === true)),
  };
}

async function shutDown(run: Running, socket: UwsListenSocket | null, timeout: number, restart: boolean): Promise<void> {
  const logger = run.settings.logger;
  const deadline = Date.now() + timeout;
  if (socket !== null) loadUws().us_listen_socket_close(socket);
  run.stopAccepting?.();
  run.settings.state.draining = true;
  // WebSockets never finish by themselves: ask them to go (1001, or 1012 to come back elsewhere) while HTTP drains.
  const sockets = restart
    ? run.hub.closeAll(CLOSE_SERVICE_RESTART, 'Server restarting', timeout)
    : run.hub.closeAll(CLOSE_GOING_AWAY, 'Server shutting down', timeout);
  // Streams (SSE, res.stream()) never finish by themselves either: end them now.
  run.tracker.endStreams();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    run.tracker.whenIdle().then(() => false),
    new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timeout))),
  ]);
  clearTimeout(timer);
  if (timedOut) {
    logger.warn({ inflight: run.tracker.size }, 'close timeout: dropping in-flight requests');
    run.tracker.destroyAll();
  }
  await sockets;
  try {
    await run.hub.bus.close();
    await run.hub.closeHistory();
  } catch (err) {
    logger.error({ err }, 'bus close failed');
  }
  run.uws.close();
  await runCloseHooks(run.closeHooks, Math.max(0, deadline - Date.now()), logger);
}

/**
 * onClose hooks in reverse order (the last added, often depending on earlier ones, goes
 * first), each awaited; past the shutdown timeout the rest are not waited for. Errors are logged.
 */
async function runCloseHooks(hooks: readonly (() => unknown)[], timeout: number, logger: Settings['logger']): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((r) => (timer = setTimeout(r, timeout, 'expired')));
  try {
    for (let i = hooks.length - 1; i >= 0; i--) {
      const done = (async () => hooks[i]!())().then(
        () => 'done' as const,
        (err) => void logger.error({ err }, 'onClose hook failed'),
      );
      if ((await Promise.race([done, expired])) === 'expired') {
        logger.warn({ left: i + 1 }, 'onClose hooks did not finish within the shutdown timeout: not waiting for them');
        return;
      }
    }
  } finally {
    clearTimeout(timer);
  }
}

/** Closes gracefully on these signals, then re-raises the signal so the process ends as it would have. */
export function closeOnSignals(server: Server, signals: NodeJS.Signals[], timeout: number, settings: Settings): () => void {
  const onSignal = (signal: NodeJS.Signals) => {
    for (const s of signals) process.removeListener(s, onSignal);
    settings.logger.info({ signal }, 'shutting down');
    void server.close({ timeout }).then(() => process.kill(process.pid, signal));
  };
  for (const s of signals) process.on(s, onSignal);
  return () => {
    for (const s of signals) process.removeListener(s, onSignal);
  };
}
