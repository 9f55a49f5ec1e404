// app.topic(pattern, { history }): options, the store interface, positions.
import { App, MemoryHistoryStore, type HistoryStore, type HistoryOptions, type Position, type HistoryRead } from '@tachyon/server';

const app = new App();
const memory: HistoryStore = new MemoryHistoryStore();
app.topic('room:*', { history: { size: 100, ttl: 120_000, store: memory } });
const opts: HistoryOptions = { size: 10 };
app.topic('feed:*', { history: opts });
const at: Position = { offset: 3, epoch: 'abc' };
const read = memory.read('room:1', { since: at }, opts) as HistoryRead;
const recovered: boolean = read.recovered;
const envelopes: readonly string[] = read.envelopes;
// @ts-expect-error offsets are numbers
const bad: Position = { offset: '3', epoch: 'abc' };
// @ts-expect-error ttl is milliseconds
app.topic('x:*', { history: { size: 1, ttl: '2m' } });
// A store of one's own may take the app's logger (handed over by app.topic()).
const own: HistoryStore = {
  ...memory,
  shared: false,
  append: memory.append,
  read: memory.read,
  useLogger: (logger) => logger.warn({}, 'x'),
};
// @ts-expect-error useLogger takes a Logger
const wrong: HistoryStore = { shared: false, append: memory.append, read: memory.read, useLogger: (logger: string) => void logger };
void [recovered, envelopes, bad, own, wrong];
