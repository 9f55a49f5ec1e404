// Dropping every connection at once, without draining: what app.abort() does for a cluster
// worker that must end now (process.exit() in it, or a fatal error; cluster/leave.ts). The
// graceful path is server.ts's shutDown().
import type { ServerState } from '../core/settings.ts';
import type { WsHub } from '../realtime/hub.ts';
import type { UwsApp } from '../uws/index.ts';

/** The WebSocket close code for "Service Restart": the client reconnects (and reaches another worker). */
export const CLOSE_SERVICE_RESTART = 1012;

/**
 * Marks the app draining (an answer still written carries `Connection: close`; readiness checks
 * answer 503), sends every WebSocket a close frame (1012: a client reconnects, instead of
 * seeing 1006), then closes every uWS socket, listen sockets included. Safe to call again: each
 * call closes what arrived since.
 */
export function dropConnections(state: ServerState, hub: WsHub, uws: UwsApp | undefined): void {
  state.draining = true;
  // A copy: each close() runs the socket's close handler, which takes it out of the hub's set.
  for (const socket of [...hub.openSockets()]) socket.close(CLOSE_SERVICE_RESTART, 'Server restarting');
  uws?.close();
}
