// WebSocket counters for metrics(): plain numbers bumped where the traffic happens, read only
// when Prometheus scrapes. The hub holds them only when a metrics() middleware is installed
// (App.start finds it); otherwise `stats` is null and each counting point is one null check.

export class WsStats {
  /** Client messages received (protocol frames and raw). */
  messagesIn = 0;
  /** Messages sent to one socket: ws.send/sendRaw, replies, protocol answers. */
  messagesOut = 0;
  /** app.publish/publishRaw and ws.publish calls (a publish fans out in C++: counted once). */
  publishes = 0;
  /** Messages uWS dropped for a slow consumer (over maxBackpressure). */
  dropped = 0;
  /** Volatile messages (send or publish) skipped for a socket under backpressure. */
  volatileDropped = 0;
  /** Sockets closed with 4429 for being too slow. */
  slowClosed = 0;
}

/** The key under which metrics() hands its WsStats to the app. @internal */
export const WS_STATS: unique symbol = Symbol('tachyon.wsStats');

/** Middleware that wants WebSocket counters carries them under WS_STATS. */
export function wsStatsOf(handler: unknown): WsStats | undefined {
  const stats = (handler as { [WS_STATS]?: unknown } | null)?.[WS_STATS];
  return stats instanceof WsStats ? stats : undefined;
}
