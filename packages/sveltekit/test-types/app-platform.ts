// App.Platform as docs/sveltekit.md declares it in src/app.d.ts: the interface extends a name
// imported at the top (TypeScript refuses an import type in `extends`, which left it empty).
import type { Socket, PresenceMember } from '@tachyon/server';
import type { Platform as TachyonPlatform, Pressure } from '../dist/index.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_ok: T) => {};

declare global {
  namespace App {
    interface Platform extends TachyonPlatform {}
  }
}

declare const platform: App.Platform;
declare const ws: Socket<{ id: string; role: string }>;

expectType<Equal<ReturnType<App.Platform['publish']>, boolean>>(true);
expectType<Equal<ReturnType<App.Platform['send']>, number>>(true);
expectType<Equal<App.Platform['pressure'], Pressure>>(true);
expectType<Equal<App.Platform['connections'], number>>(true);
platform.send(ws, 'dm', { text: 'hi' });
platform.send('user-1', 'dm');
platform.send(42, 'dm');
// @ts-expect-error: a socket or a user id
platform.send({ id: 'x' }, 'dm');
const n: number = platform.sendTo<{ role: string }>((data) => data.role === 'admin', 'alert', 1);
// The socket is there for this worker's sockets only (another worker's have their data alone).
platform.sendTo<{ role: string }>((data, socket) => data.role === 'admin' && socket !== undefined && socket.id > 0, 'alert');
// @ts-expect-error: `socket` may be undefined (a socket of another worker)
platform.sendTo<{ role: string }>((data, socket) => socket.id > 0, 'alert');
// @ts-expect-error: the filter returns a boolean
platform.sendTo((data: { role: string }) => data.role, 'alert');
const reply: Promise<{ ok: boolean }> = platform.request<{ ok: boolean }>(ws, 'confirm', { q: 1 }, { timeout: 5000 });
// @ts-expect-error: request asks one socket
platform.request('user-1', 'confirm');
const members: Promise<PresenceMember<{ name: string }>[]> = platform.presence<{ name: string }>('room:lobby');
const p: Pressure = platform.pressure;
const numbers: number[] = [p.connections, p.backpressured, p.buffered, p.inflight];
const draining: boolean = p.draining;
void [n, reply, members, numbers, draining];
