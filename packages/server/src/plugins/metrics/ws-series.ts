// WebSocket series for metrics(): the app's plain counters (core/middleware-setup.ts), turned into
// Prometheus counters only when scraped.
import type { Metric, Registry } from 'prom-client';
import type { WebSocketCounters } from '../../core/middleware-setup.ts';

const SERIES: { name: string; help: string; read: (s: WebSocketCounters) => number }[] = [
  {
    name: 'websocket_messages_received_total',
    help: 'WebSocket messages received from clients (protocol frames and raw)',
    read: (s) => s.messagesIn,
  },
  {
    name: 'websocket_messages_sent_total',
    help: 'WebSocket messages sent to one socket (send, sendRaw, replies, protocol answers); publishes are counted apart',
    read: (s) => s.messagesOut,
  },
  {
    name: 'websocket_publishes_total',
    help: 'Publishes to topics (app.publish, app.publishRaw, ws.publish); each fans out to every subscriber',
    read: (s) => s.publishes,
  },
  {
    name: 'websocket_slow_consumer_dropped_messages_total',
    help: 'Messages dropped because a socket was over maxBackpressure',
    read: (s) => s.dropped,
  },
  {
    name: 'websocket_volatile_dropped_messages_total',
    help: 'Volatile messages (send or publish) skipped for a socket under backpressure',
    read: (s) => s.volatileDropped,
  },
  { name: 'websocket_slow_consumers_closed_total', help: 'Sockets closed with 4429 for being too slow', read: (s) => s.slowClosed },
];

/** `stats()`: the app's counters, read at each scrape (zeros until the app hands them over). */
export function registerWsSeries(registry: Registry, prefix: string, stats: () => WebSocketCounters): void {
  for (const def of SERIES) {
    const metric = {
      name: `${prefix}${def.name}`,
      help: def.help,
      type: 'counter',
      aggregator: 'sum',
      get: () => ({ ...metric, values: [{ labels: {}, value: def.read(stats()) }] }),
      reset: () => {},
    };
    registry.registerMetric(metric as unknown as Metric);
  }
}
