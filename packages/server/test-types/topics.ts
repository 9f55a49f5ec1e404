// app.topic(): options per topic pattern.
import { App, type HistoryStore, type TopicOptions, type TopicStats } from '@tachyon/server';

const app = new App();
app.topic('room:*', { history: { size: 100, ttl: 120_000 }, presence: true }).topic('lobby', {});
const opts: TopicOptions = { history: { size: 10 } };
app.topic('chat:*', opts);
// @ts-expect-error history needs a size
app.topic('a:*', { history: { ttl: 5 } });

// Looking inside (docs/realtime.md): app.sockets() and app.topicStats().
{
  type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
  const expectType = <T extends true>(_ok: T) => {};
  const inside = new App();
  for (const s of inside.sockets()) expectType<Equal<typeof s.id, number>>(true);
  const stats = await inside.topicStats('room:1');
  expectType<Equal<typeof stats, TopicStats>>(true);
  expectType<Equal<typeof stats.presence, number | null>>(true);
  expectType<Equal<typeof stats.history, number | null>>(true);
  // @ts-expect-error a topic is a string
  void inside.topicStats(1);
  const store: HistoryStore = {
    shared: false,
    append: () => ({ offset: 1, epoch: 'e', envelope: '' }),
    read: () => ({ offset: 0, epoch: 'e', recovered: false, envelopes: [] }),
    kept: async () => 3,
  };
  void store;
}
