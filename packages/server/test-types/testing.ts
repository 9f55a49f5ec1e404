// Type tests for app.request() and app.close() (docs/testing.md).
import { App } from '@tachyon/server';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_ok: T) => {};

const app = new App();
app.get('/users/:id', (req) => ({ id: req.params.id }));

const res = await app.request('/users/1');
expectType<Equal<typeof res, Response>>(true);
await app.request('/users', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Ada' }) });
await app.request(new Request('http://localhost/users/2'));
await app.request(new URL('http://localhost/users/3'));
// @ts-expect-error: a path, URL or Request
await app.request(42);
const closed: Promise<void> = app.close({ timeout: 1000 });
void closed;
