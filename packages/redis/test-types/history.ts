// Type tests: redisHistory() is a history store for app.topic(pattern, { history: { store } }).
import { App, type HistoryStore } from '@tachyon/server';
import { redisHistory, redisBus, type RedisHistoryOptions, type RedisHistoryStats } from '@tachyon/redis';

const store: HistoryStore = redisHistory({ url: 'redis://127.0.0.1:6379', prefix: 'chat:history:' });
const app = new App({ bus: redisBus() });
app.topic('room:*', { history: { size: 100, ttl: 120_000, store } });
const options: RedisHistoryOptions = { client: { username: 'u', password: 'p' } };
redisHistory(options);
// @ts-expect-error unknown option
redisHistory({ host: 'localhost' });
// @ts-expect-error a store, not a URL
app.topic('a:*', { history: { size: 1, store: 'redis://127.0.0.1' } });

// The pending bound and its counters; Redis Sentinel instead of a URL.
const bounded = redisHistory({ maxPending: 1000, maxPendingBytes: 4 << 20 });
const stats: RedisHistoryStats = bounded.stats();
const numbers: number[] = [stats.pending, stats.pendingBytes, stats.overflowed, stats.offline];
const up: boolean = stats.connected;
// @ts-expect-error maxPending is a number
redisHistory({ maxPending: '1000' });
redisHistory({ sentinel: { name: 'mymaster', nodes: [{ host: 's1', port: 26379 }], client: { password: 'p' } } });
// @ts-expect-error a sentinel node is { host, port }
redisHistory({ sentinel: { name: 'mymaster', nodes: ['s1:26379'] } });
void [numbers, up];
