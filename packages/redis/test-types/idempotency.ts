// Type tests: redisIdempotency() is a SharedKeys store for a ws route's idempotency option.
import { App, type SharedKeys } from '@tachyon/server';
import { redisIdempotency, type RedisIdempotencyOptions } from '@tachyon/redis';

const keys = redisIdempotency({ url: 'redis://127.0.0.1:6379', prefix: 'pay:', whenDown: 'refuse', timeout: 500, lease: 3000 });
const asStore: SharedKeys = keys;
const app = new App();
app.ws('/live', { idempotency: { window: 60_000, keys: 1000, store: keys } });
app.onClose(() => keys.close());
const connected: Promise<void> = keys.connect();
const stats: { connected: boolean; running: number; waiting: number; pending: number } = keys.stats();
const options: RedisIdempotencyOptions = { sentinel: { name: 'm', nodes: [{ host: 'h', port: 26379 }] } };
redisIdempotency(options);
// @ts-expect-error whenDown is 'run' or 'refuse'
redisIdempotency({ whenDown: 'maybe' });
// @ts-expect-error unknown option
redisIdempotency({ window: 5 });
// @ts-expect-error a store has claim() and settle()
app.ws('/x', { idempotency: { store: {} } });
void [asStore, connected, stats];
