// One Tachyon server in its own process, with a Redis or NATS bus, driven by its parent
// over IPC (node.ts): publish bursts, read the bus's counters, close. Its log lines (JSON)
// go to stdout/stderr, where the parent reads them.
import { App, health, jsonLogger } from '@tachyon/server';
import { redisBus } from '@tachyon/redis';
import { natsBus } from '@tachyon/nats';

const config = JSON.parse(process.argv[2]!) as { kind: 'redis' | 'nats'; options: Record<string, unknown> };
const bus = config.kind === 'redis' ? redisBus(config.options) : natsBus(config.options);
const app = new App({ bus, logger: jsonLogger('debug') });
app.use(health()); // /readyz is 503 while the bus is not ready
app.ws('/ws', {});
const server = await app.listen({ port: 0, host: '127.0.0.1' });

type Command =
  | { id: number; op: 'publish'; topic: string; count: number; from: string; start?: number; event?: string }
  | { id: number; op: 'publishRaw'; topic: string; base64: string }
  | { id: number; op: 'stats' }
  | { id: number; op: 'subscribers'; topic: string }
  | { id: number; op: 'requestAll'; topic: string; event: string; data: unknown; timeout: number }
  | { id: number; op: 'close' };

process.on('message', async (m: Command) => {
  let result: unknown = null;
  switch (m.op) {
    case 'publish':
      for (let i = 0; i < m.count; i++) app.publish(m.topic, m.event ?? 'n', { from: m.from, seq: (m.start ?? 0) + i });
      break;
    case 'publishRaw':
      app.publishRaw(m.topic, Buffer.from(m.base64, 'base64'), true);
      break;
    case 'stats':
      result = { ...bus.stats(), servers: bus.servers };
      break;
    case 'subscribers':
      result = { total: app.cluster.subscribers(m.topic), local: app.subscribers(m.topic) };
      break;
    case 'requestAll': {
      const started = Date.now();
      const { replies, missing } = await app.requestAll(m.topic, m.event, m.data, { timeout: m.timeout });
      result = { replies, missing: missing.map((x) => ({ id: x.id, code: x.error.code })), ms: Date.now() - started, server: bus.server };
      break;
    }
    case 'close':
      await server.close({ timeout: 2000 });
      process.send!({ id: m.id, result: null }, () => process.exit(0));
      return;
  }
  process.send!({ id: m.id, result });
});
process.send!({ listening: server.port });
