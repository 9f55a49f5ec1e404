// Presence: app.topic(pattern, { presence }) options and app.presence() members.
import { App, type PresenceMember, type PresenceOptions, type Socket } from '@tachyon/server';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_ok: T) => {};

const app = new App({ presence: { heartbeat: 1000 } });
app.topic('room:*', {
  presence: {
    id: (ws) => (ws.data as { userId: string }).userId,
    data: (ws: Socket<any>) => ({ name: ws.data.name as string }),
    events: true,
  },
});
app.topic('lobby', { presence: true });
app.topic('numbers:*', { presence: { id: () => 42 } });
const opts: PresenceOptions = { events: false };
app.topic('quiet:*', { presence: opts });

// @ts-expect-error id is a function of the socket, not a field name
app.topic('a:*', { presence: { id: 'userId' } });
// @ts-expect-error events is a boolean
app.topic('b:*', { presence: { events: 'yes' } });
// @ts-expect-error ids are strings or numbers
app.topic('c:*', { presence: { id: () => ({ user: 1 }) } });
// @ts-expect-error heartbeat is in milliseconds
new App({ presence: { heartbeat: '2s' } });

async function members() {
  const list = await app.presence('room:1');
  expectType<Equal<typeof list, PresenceMember<unknown>[]>>(true);
  expectType<Equal<(typeof list)[number]['id'], string>>(true);
  const typed = await app.presence<{ name: string }>('room:1');
  expectType<Equal<(typeof typed)[number]['data'], { name: string } | undefined>>(true);
  // @ts-expect-error app.presence() is a promise: await it
  app.presence('room:1').length;
}
void members;
