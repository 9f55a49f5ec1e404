// Type tests: redisRateLimitStore() is a RateLimitStore for rateLimit() and WebSocket upgrade limits.
import { App, rateLimit, type RateLimitStore } from '@tachyon/server';
import { redisRateLimitStore, type RedisRateLimitStoreOptions } from '@tachyon/redis';

const store = redisRateLimitStore({ url: 'redis://127.0.0.1:6379', prefix: 'api:', client: { password: 'p' } });
const asStore: RateLimitStore = store;
const app = new App();
app.use(rateLimit({ window: 60_000, max: 100, store }));
app.ws('/live', { rateLimit: { upgrades: { window: 60_000, max: 10, store } } });
app.onClose(() => store.close());
const connected: Promise<void> = store.connect();
const options: RedisRateLimitStoreOptions = {};
redisRateLimitStore(options);
const viaSentinel = redisRateLimitStore({ sentinel: { name: 'm', nodes: [{ host: 's1', port: 26379 }] }, timeout: 500 });
const away: boolean = viaSentinel.away;
// @ts-expect-error timeout is a number of milliseconds
redisRateLimitStore({ timeout: '1s' });
// @ts-expect-error sentinel nodes are { host, port }
redisRateLimitStore({ sentinel: { name: 'm', nodes: ['s1:26379'] } });
// @ts-expect-error url is a string
redisRateLimitStore({ url: ['redis://a'] });
// @ts-expect-error unknown option
redisRateLimitStore({ window: 5 });
void [asStore, connected, away];
