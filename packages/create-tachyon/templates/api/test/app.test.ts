// `npm test`: app.request() runs the real server stack without picking a port.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createApp } from '../src/app.ts';

const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

test('create, read, list and delete a todo', async () => {
  const app = createApp();
  const created = await app.request('/todos', json({ title: 'write tests' }));
  assert.equal(created.status, 201);
  const todo = await created.json();
  assert.deepEqual(todo, { id: 1, title: 'write tests', done: false });
  assert.deepEqual(await (await app.request('/todos/1')).json(), todo);
  assert.deepEqual(await (await app.request('/todos')).json(), [todo]);
  assert.equal((await app.request('/todos/1', { method: 'DELETE' })).status, 204);
  assert.equal((await app.request('/todos/1')).status, 404);
});

test('bad input is a 400 that names the field', async () => {
  const app = createApp();
  const res = await app.request('/todos', json({ title: '' }));
  assert.equal(res.status, 400);
  const problem = await res.json();
  assert.equal(problem.issues[0].path[0], 'title');
  assert.equal((await app.request('/todos/abc')).status, 400);
});

test('GET /healthz answers 200', async () => {
  assert.equal((await createApp().request('/healthz')).status, 200);
});
