// Type tests for presence on the client: live.presence() and live.onPresence().
import { connect, type PRESENCE_EVENTS, type PresenceChange, type PresenceMember } from '../dist/index.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_ok: T) => {};

type Events = { chat: { text: string } };
const live = connect<Events>('ws://localhost:3000/live');

async function read() {
  const members = await live.presence('room:1');
  expectType<Equal<typeof members, PresenceMember<unknown>[]>>(true);
  expectType<Equal<(typeof members)[number]['id'], string>>(true);
  const named = await live.presence<{ name: string }>('room:1', { timeout: 2000 });
  expectType<Equal<(typeof named)[number]['data'], { name: string } | undefined>>(true);
  // @ts-expect-error a topic is a string
  await live.presence(1);
  // @ts-expect-error the options are RequestOptions
  await live.presence('room:1', { timeout: '1s' });
}
void read;

const off = live.onPresence<{ name: string }>('room:1', (change) => {
  expectType<Equal<typeof change, PresenceChange<{ name: string }>>>(true);
  expectType<Equal<typeof change.type, 'join' | 'leave'>>(true);
  expectType<Equal<typeof change.member.data, { name: string } | undefined>>(true);
});
off();
live.onPresence('room:1', () => {}, { onDenied: (e) => console.error(e.code) });
// @ts-expect-error a listener takes one change
live.onPresence('room:1', (a: string, b: number) => {});
expectType<Equal<typeof PRESENCE_EVENTS.join, '$join'>>(true);
