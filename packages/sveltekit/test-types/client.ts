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

// The svelte-adapter-uws style helpers.
import {
  count,
  crud,
  latest,
  lookup,
  once,
  presence,
  type Count,
  type Crud,
  type Latest,
  type Lookup,
  type Presence,
  type PresenceMember,
} from '../dist/client/index.js';

type Todo = { id: number; text: string };

const headline = latest<string>('board', 'headline', 'none');
expectType<Equal<typeof headline, Latest<string>>>(true);
expectType<Equal<typeof headline.value, string | undefined>>(true);
// @ts-expect-error: the initial value has the event's type
latest<string>('board', 'headline', 42);

const online = count('online', 0);
expectType<Equal<typeof online, Count>>(true);
expectType<Equal<typeof online.value, number>>(true);
// @ts-expect-error: a count starts from a number
count('online', '0');

const alert = once<{ level: number }>('board', 'alert', { timeout: 1000 });
expectType<Equal<typeof alert, Promise<{ level: number }>>>(true);

const todos = crud<Todo>('todos', { key: 'id', initial: [{ id: 1, text: 'one' }] });
expectType<Equal<typeof todos, Crud<Todo>>>(true);
expectType<Equal<typeof todos.items, readonly Todo[]>>(true);
expectType<Equal<ReturnType<typeof todos.get>, Todo | undefined>>(true);
crud<Todo>('todos', { initial: async () => [{ id: 2, text: 'two' }] });
// @ts-expect-error: the key is a field of the item
crud<Todo>('todos', { key: 'title' });
// @ts-expect-error: the initial items have the item type
crud<Todo>('todos', { initial: [{ id: 'x' }] });

const one = lookup<Todo>('todos', 1, { initial: { id: 1, text: 'one' } });
expectType<Equal<typeof one, Lookup<Todo>>>(true);
expectType<Equal<typeof one.value, Todo | undefined>>(true);
// @ts-expect-error: a key is a string or a number
lookup<Todo>('todos', { id: 1 });

const here = presence<{ name: string }>('room:lobby');
expectType<Equal<typeof here, Presence<{ name: string }>>>(true);
expectType<Equal<typeof here.members, readonly PresenceMember<{ name: string }>[]>>(true);
expectType<Equal<typeof here.count, number>>(true);
