// app.routes(): the declared routes as plain, frozen data (what an OpenAPI generator walks).
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { z } from 'zod';
import { App, Router, type HttpRouteInfo, type WsRouteInfo } from '../../src/index.ts';
import { start } from '../helpers.ts';

const UserParams = z.object({ id: z.coerce.number() });
const NewUser = z.object({ name: z.string() });
const Say = z.object({ text: z.string() });

function declare(dir: string): App {
  const app = new App();
  app.use((_req, _res, next) => next());
  app.get('/', () => 'home');
  app.post('/users', { body: NewUser, bodyLimit: 2048, consumes: ['json', 'urlencoded'] }, (req) => req.body);
  const api = new Router();
  api.use('/admin', (_req, _res, next) => next());
  api.get('/users/:id', { params: UserParams, dedup: true }, (req) => req.params);
  api.delete('/admin/users/:id', () => null);
  app.attach('/api', api);
  app.ws('/live', { events: { say: { schema: Say, handler: () => {} }, ping: { handler: () => 'pong' } } });
  app.mount('/legacy', () => new Response('legacy'), { stripPrefix: true });
  app.static('/assets', dir);
  return app;
}

test('routes() lists HTTP routes with full paths and schemas, WS routes, mounts and static prefixes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tachyon-routes-'));
  const app = declare(dir);
  const routes = app.routes();
  const http = routes.filter((r): r is HttpRouteInfo => r.kind === 'http');
  assert.deepEqual(
    http.map((r) => `${r.method} ${r.path}`),
    ['GET /', 'POST /users', 'GET /api/users/:id', 'DELETE /api/admin/users/:id'],
  );
  const post = http[1]!;
  assert.equal(post.schemas.body, NewUser, 'the schema object itself, for generators');
  assert.deepEqual(post.consumes, ['json', 'urlencoded']);
  assert.equal(post.bodyLimit, 2048);
  const byId = http[2]!;
  assert.deepEqual(byId.params, ['id']);
  assert.equal(byId.schemas.params, UserParams);
  assert.equal(byId.dedup, true);
  assert.equal(byId.middleware, 1, 'app middleware only: /admin does not cover /users');
  assert.equal(http[3]!.middleware, 2, "app middleware + the router's /admin middleware");
  const ws = routes.find((r): r is WsRouteInfo => r.kind === 'ws')!;
  assert.equal(ws.path, '/live');
  assert.deepEqual(ws.events, [{ name: 'say', schema: Say }, { name: 'ping' }]);
  assert.deepEqual(
    routes.filter((r) => r.kind === 'mount' || r.kind === 'static'),
    [
      { kind: 'mount', prefix: '/legacy', stripPrefix: true },
      { kind: 'static', prefix: '/assets', dir },
    ],
  );
});

test('the table is read-only: changing what routes() returned changes nothing', () => {
  const app = declare(mkdtempSync(join(tmpdir(), 'tachyon-routes-')));
  const routes = app.routes();
  const first = routes[0] as HttpRouteInfo;
  assert.ok(Object.isFrozen(first) && Object.isFrozen(first.schemas) && Object.isFrozen(first.params));
  assert.throws(() => ((first as { path: string }).path = '/hacked'), TypeError);
  assert.throws(() => ((first.schemas as Record<string, unknown>).body = NewUser), TypeError);
  routes.length = 0;
  assert.equal(app.routes().length, 7);
  assert.equal((app.routes()[0] as HttpRouteInfo).path, '/');
});

test('after listen, static files and mounts are still listed by prefix, not as their catch-all routes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tachyon-routes-'));
  writeFileSync(join(dir, 'a.txt'), 'a');
  const app = declare(dir);
  const running = await start(app);
  try {
    const paths = app.routes().map((r) => ('path' in r ? r.path : r.prefix));
    assert.deepEqual(paths, ['/', '/users', '/api/users/:id', '/api/admin/users/:id', '/live', '/legacy', '/assets']);
    assert.equal(await (await fetch(`${running.url}/assets/a.txt`)).text(), 'a');
  } finally {
    await running.close();
  }
});

test('routes() carries reply schemas and documentation fields; wrong ones fail at declaration', () => {
  const User = z.object({ id: z.number(), name: z.string() });
  const Problem = z.object({ error: z.string() });
  const app = new App();
  app.get(
    '/users/:id',
    {
      response: { 200: User, 404: Problem, '5XX': Problem, default: Problem },
      summary: 'One user',
      description: 'By **id**.',
      tags: ['users'],
      deprecated: true,
      operationId: 'getUser',
      security: [{ apiKey: [] }],
    },
    () => ({ id: 1, name: 'Ada' }),
  );
  app.get('/internal', { hide: true }, () => 'x');
  const [user, internal] = app.routes() as HttpRouteInfo[];
  assert.equal(user!.response[200], User, 'the schema object itself');
  assert.deepEqual(Object.keys(user!.response), ['200', '404', '5XX', 'default']);
  assert.deepEqual(user!.docs, {
    summary: 'One user',
    description: 'By **id**.',
    tags: ['users'],
    deprecated: true,
    operationId: 'getUser',
    security: [{ apiKey: [] }],
  });
  assert.ok(Object.isFrozen(user!.response) && Object.isFrozen(user!.docs));
  assert.deepEqual(internal!.docs, { hide: true });
  assert.deepEqual(internal!.response, {});

  const bad: [object, RegExp][] = [
    [{ response: { 700: User } }, /response key "700" is not a status/],
    [{ response: { ok: User } }, /response key "ok"/],
    [{ response: { 200: { type: 'object' } } }, /response\[200\] must be a Standard Schema/],
    [{ response: [User] }, /response must map statuses to schemas/],
    [{ summary: '' }, /summary must be a non-empty string/],
    [{ operationId: 3 }, /operationId must be a non-empty string/],
    [{ tags: 'users' }, /tags must be an array of non-empty strings/],
    [{ deprecated: 'yes' }, /deprecated must be a boolean/],
    [{ hide: 1 }, /hide must be a boolean/],
    [{ security: [{ apiKey: 'read' }] }, /security must be an array of \{ scheme: \[scopes\] \} objects/],
    [{ summmary: 'x' }, /summmary.*summary/],
  ];
  for (const [options, message] of bad)
    assert.throws(() => new App().get('/x', options as never, () => null), message, JSON.stringify(options));
});
