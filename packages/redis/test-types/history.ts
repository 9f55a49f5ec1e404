// Type tests: redisHistory() is a history store for app.topic(pattern, { history: { store } }).
import { App, type HistoryStore } from '@tachyon/server';
import { redisHistory, redisBus, type RedisHistoryOptions } from '@tachyon/redis';

const store: HistoryStore = redisHistory({ url: 'redis://127.0.0.1:6379', prefix: 'chat:history:' });
const app = new App({ bus: redisBus() });
app.topic('room:*', { history: { size: 100, ttl: 120_000, store } });
const options: RedisHistoryOptions = { client: { username: 'u', password: 'p' } };
redisHistory(options);
// @ts-expect-error unknown option
redisHistory({ host: 'localhost' });
// @ts-expect-error a store, not a URL
app.topic('a:*', { history: { size: 1, store: 'redis://127.0.0.1' } });
