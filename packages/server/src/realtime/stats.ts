// WebSocket counters: plain numbers bumped where the traffic happens, read only when someone
// (metrics()) reads them. The hub holds them only once a middleware asked for them at start
// (MiddlewareSetupApi.websocketCounters); otherwise `stats` is null and each counting point
// is one null check.
import type { WebSocketCounters } from '../core/middleware-setup.ts';

export class WsStats implements WebSocketCounters {
  messagesIn = 0;
  messagesOut = 0;
  publishes = 0;
  dropped = 0;
  volatileDropped = 0;
  slowClosed = 0;
}
