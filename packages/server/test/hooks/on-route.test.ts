// onRoute at declaration (docs/hooks.md): each route is heard with its full path when it is
// declared on the app or a scope, when the router holding it is attached, and — for a hook added
// late — at once for the routes before it; scopes hear only their own routes and those below.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { App, Router, type RouteInfo } from '../../src/index.ts';

const label = (r: RouteInfo) => (r.kind === 'http' ? `${r.method} ${r.path}` : r.kind === 'ws' ? `ws ${r.path}` : `${r.kind} ${r.prefix}`);

describe('onRoute hears routes as they are declared', () => {
  test('synchronously, with full paths: app routes, scope routes, routers when attached and after', async () => {
    const app = new App();
    const heard: string[] = [];
    app.addHook('onRoute', (r) => void heard.push(label(r)));
    app.get('/a', () => 'a');
    assert.deepEqual(heard, ['GET /a'], 'heard at the declaration, before any start');

    const users = new Router();
    users.get('/:id', () => 'user');
    assert.deepEqual(heard, ['GET /a'], 'a router not attached yet has no full path');
    app.attach('/users', users);
    assert.deepEqual(heard, ['GET /a', 'GET /users/:id'], 'its routes are heard when it is attached');
    users.delete('/:id', () => null);
    assert.equal(heard.at(-1), 'DELETE /users/:id', 'and its later routes at their declaration');

    // A router attached in two places is two routes.
    const shared = new Router();
    shared.get('/ping', () => 'pong');
    app.attach('/v1', shared);
    app.attach('/v2', shared);
    assert.deepEqual(heard.slice(-2), ['GET /v1/ping', 'GET /v2/ping']);

    await app.register(
      async (scope) => {
        scope.post('/items', () => 'ok');
        const nested = new Router();
        scope.attach('/deep', nested);
        nested.put('/x', () => 'x');
      },
      { prefix: '/shop' },
    );
    assert.deepEqual(heard.slice(-2), ['POST /shop/items', 'PUT /shop/deep/x']);

    app.ws('/live', { events: { say: { schema: z.object({ text: z.string() }), handler: () => {} } } });
    app.mount('/svelte', () => new Response('x'));
    const dir = mkdtempSync(join(tmpdir(), 'tachyon-onroute-'));
    writeFileSync(join(dir, 'a.txt'), 'a');
    app.static('/assets', dir);
    assert.deepEqual(heard.slice(-3), ['ws /live', 'mount /svelte', 'static /assets'], 'the catch-alls of a mount are not heard');
    await app.listen(0, '127.0.0.1');
    assert.ok(!heard.some((h) => h.includes('*')), `the static catch-all loaded at start is not heard either: ${heard}`);
    assert.deepEqual(
      heard.filter((h) => !h.startsWith('ws') && !h.startsWith('mount') && !h.startsWith('static')),
      app
        .routes()
        .filter((r) => r.kind === 'http')
        .map(label)
        .sort((x, y) => heard.indexOf(x) - heard.indexOf(y)),
      'what onRoute heard is what routes() lists',
    );
    await app.close();
  });

  test('a hook added late hears the routes declared before it first, in order, then the new ones', () => {
    const app = new App();
    app.get('/one', { summary: 'One' }, () => 1);
    const r = new Router();
    r.get('/two', () => 2);
    app.attach('/r', r);
    app.ws('/live', {});
    app.mount('/m', () => new Response('m'));
    const heard: string[] = [];
    const summaries: unknown[] = [];
    app.addHook('onRoute', (route, options) => {
      heard.push(label(route));
      if (route.kind === 'http') summaries.push((options as { summary?: string }).summary);
    });
    assert.deepEqual(heard, ['GET /one', 'GET /r/two', 'ws /live', 'mount /m']);
    assert.deepEqual(summaries, ['One', undefined], 'options as declared');
    app.get('/three', () => 3);
    assert.equal(heard.at(-1), 'GET /three');
  });

  test('a scope hears its own routes and those below it, never a sibling or the app', async () => {
    const app = new App();
    const root: string[] = [];
    const admin: string[] = [];
    app.addHook('onRoute', (r) => void root.push(label(r)));
    app.get('/home', () => 'home');
    await app.register(
      async (scope) => {
        scope.get('/before', () => 'b');
        scope.addHook('onRoute', (r) => void admin.push(label(r)));
        scope.get('/users', () => 'u');
        await scope.register((inner) => void inner.get('/deep', () => 'd'), { prefix: '/inner' });
      },
      { prefix: '/admin' },
    );
    await app.register((sibling) => void sibling.get('/public', () => 'p'), { prefix: '/site' });
    app.get('/after', () => 'after');
    assert.deepEqual(admin, ['GET /admin/before', 'GET /admin/users', 'GET /admin/inner/deep']);
    assert.deepEqual(root, [
      'GET /home',
      'GET /admin/before',
      'GET /admin/users',
      'GET /admin/inner/deep',
      'GET /site/public',
      'GET /after',
    ]);
  });

  test('middleware counts what was declared before the route, like routes() once all is declared', () => {
    const app = new App();
    const seen: number[] = [];
    app.use((_q, _s, next) => next());
    app.addHook('onRoute', (r) => void (r.kind === 'http' && seen.push(r.middleware)));
    const api = new Router();
    api.use('/admin', (_q, _s, next) => next());
    api.get('/admin/x', () => 'x');
    api.get('/y', () => 'y');
    app.attach('/api', api);
    assert.deepEqual(seen, [2, 1]);
  });

  test('bad hooks: not a function, after start', async () => {
    const app = new App();
    assert.throws(() => app.addHook('onRoute', 'x' as never), /hook "onRoute" must be a function, got string/);
    await app.register((scope) => {
      assert.throws(() => scope.addHook('onRoute', null as never), /hook "onRoute" must be a function, got null/);
    });
    app.get('/', () => 'ok');
    assert.equal((await app.request('/')).status, 200);
    assert.throws(() => app.addHook('onRoute', () => {}), /after the app started/);
    await app.close();
  });
});
