// An acceptor: a uWS app with no routes that only listens, and hands each accepted connection
// to one of its child apps (round-robin), each an App started with `startForAcceptor()` in
// its own worker thread. This is how uWS spreads one port over threads on every platform
// (unlike SO_REUSEPORT). Internal: the building block for worker-thread clustering.
import { loadUws, type UwsApp, type UwsListenSocket } from '../uws/index.ts';
import { withTlsFiles, type TlsIdentity } from '../serving/tls.ts';
import { listenOn } from './server.ts';

export interface Acceptor {
  readonly port: number;
  readonly host: string;
  /** Starts handing connections to the app behind `descriptor` (from `App.startForAcceptor`). */
  add(descriptor: number): void;
  /** Stops handing it connections; do this before that app closes. */
  remove(descriptor: number): void;
  /** Stops listening. Connections already handed over stay with their app. */
  close(): void;
}

/**
 * Listens on host:port (port 0 picks a free one) for child apps in other threads. With `tls`
 * the acceptor is an SSLApp: uWS needs acceptor and children to agree (the children do the
 * handshakes). @internal
 */
export async function listenAcceptor(port = 0, host = '0.0.0.0', tls?: TlsIdentity): Promise<Acceptor> {
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError(`Invalid port ${port}`);
  const uws: UwsApp = tls ? withTlsFiles(tls, (o) => loadUws().SSLApp(o)) : loadUws().App();
  // Only while no child app is attached (starting, or every worker restarting): uWS serves
  // the connection itself then. A clear 503 beats the route-less 404.
  uws.any('/*', (res) => {
    res
      .writeStatus('503 Service Unavailable')
      .writeHeader('retry-after', '1')
      .writeHeader('connection', 'close')
      .end('No worker is ready\n');
  });
  const listening = await listenOn(uws, host, port);
  let socket: UwsListenSocket | null = listening.socket;
  const children = new Set<number>();
  return {
    port: listening.port,
    host,
    add(descriptor) {
      if (typeof descriptor !== 'number' || children.has(descriptor)) throw new TypeError('add() needs a new app descriptor');
      children.add(descriptor);
      uws.addChildAppDescriptor(descriptor);
    },
    remove(descriptor) {
      if (!children.delete(descriptor)) return;
      uws.removeChildAppDescriptor(descriptor);
    },
    close() {
      if (socket === null) return;
      loadUws().us_listen_socket_close(socket);
      socket = null;
      for (const descriptor of children) uws.removeChildAppDescriptor(descriptor);
      children.clear();
      uws.close();
    },
  };
}
