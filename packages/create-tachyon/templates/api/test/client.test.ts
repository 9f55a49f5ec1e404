// The typed client against the real server on a port: `client<Api>` reads the routes, their
// schemas and their replies from the app's type (no code generation). A wrong path, a missing
// param or a bad body fails `npm run typecheck`.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { client, type HttpClient } from '@tachyon/client/http';
import type { Server } from '@tachyon/server';
import { createApp, type Api } from '../src/app.ts';

let server: Server;
let api: HttpClient<Api>;
before(async () => {
  server = await createApp().listen({ port: 0, host: '127.0.0.1' });
  api = client<Api>(`http://127.0.0.1:${server.port}`);
});
after(() => server.close({ timeout: 1000 }));

test('the typed client creates, reads and deletes a todo', async () => {
  const made = await api.post('/todos', { body: { title: 'typed' } });
  assert.equal(made.status, 201);
  if (!made.ok) throw new Error('not created');
  const { id } = made.data; // made.data: { id: number; title: string; done: boolean }
  assert.deepEqual(made.data, { id, title: 'typed', done: false });

  const read = await api.get('/todos/:id', { params: { id } });
  assert.ok(read.ok);
  assert.equal(read.data.title.toUpperCase(), 'TYPED');

  assert.equal((await api.delete('/todos/:id', { params: { id } })).status, 204);
  const gone = await api.get('/todos/:id', { params: { id } });
  assert.equal(gone.status, 404);
  if (gone.status === 404) assert.match(gone.data.error, /no todo/);
});

test('wrong calls do not compile', () => {
  // Type-only checks: never called, so nothing is sent.
  const never = () => {
    // @ts-expect-error: no such route
    void api.get('/todo');
    // @ts-expect-error: the path has a param
    void api.get('/todos/:id');
    // @ts-expect-error: the body needs a title
    void api.post('/todos', { body: { done: true } });
  };
  assert.equal(typeof never, 'function');
});
