// Type tests for @tachyon/sveltekit/client.
import { Connection, connection, topic, type Status, type Topic, type TopicEvent } from '../dist/client/index.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_ok: T) => {};

const live = connection({ path: '/ws', maxRetries: 5 });
expectType<Equal<typeof live.status, Status>>(true);
live.live?.request('anything');

const news = topic<{ title: string }>('news', { limit: 10, event: 'posted' });
expectType<Equal<typeof news, Topic<{ title: string }>>>(true);
expectType<Equal<typeof news.latest, TopicEvent<{ title: string }> | undefined>>(true);
expectType<Equal<typeof news.data, { title: string } | undefined>>(true);
expectType<Equal<typeof news.events, readonly TopicEvent<{ title: string }>[]>>(true);
// @ts-expect-error: the list is read-only
news.events.push({ event: 'x', data: { title: 'y' } });
// @ts-expect-error: limit is a number
topic('news', { limit: '10' });

new Connection({ url: 'wss://example.com/ws' }).topic('x');
