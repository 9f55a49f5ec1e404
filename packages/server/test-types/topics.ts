// app.topic(): options per topic pattern.
import { App, type TopicOptions } from '@tachyon/server';

const app = new App();
app.topic('room:*', { history: { size: 100, ttl: 120_000 }, presence: true }).topic('lobby', {});
const opts: TopicOptions = { history: { size: 10 } };
app.topic('chat:*', opts);
// @ts-expect-error history needs a size
app.topic('a:*', { history: { ttl: 5 } });
