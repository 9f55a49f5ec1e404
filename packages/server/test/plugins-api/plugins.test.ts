// Plugins and encapsulation (docs/plugins.md): what a scope adds stays in the scope.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { App, definePlugin, HttpError, Router, type Scope } from '../../src/index.ts';

describe('encapsulation', () => {
  test('a scoped hook, middleware and error handler never run for a sibling scope or the root; children inherit; prefix applies', async () => {
    const seen: string[] = [];
    const app = new App();
    app.addHook('onRequest', (req) => void seen.push(`root ${req.path}`));
    app.get('/', () => 'root');
    await app.register(
      async (scope) => {
        scope.addHook('onRequest', (req) => void seen.push(`admin ${req.path}`));
        scope.use((_req, res, next) => {
          res.header('x-admin', '1');
          return next();
        });
        scope.error(() => ({ error: 'admin error handler' }));
        scope.get('/panel', () => 'panel');
        scope.get('/fail', () => {
          throw new Error('x');
        });
        await scope.register(
          (child) => {
            child.addHook('onRequest', (req) => void seen.push(`child ${req.path}`));
            child.get('/deep', () => 'deep');
          },
          { prefix: '/child' },
        );
      },
      { prefix: '/admin' },
    );
    await app.register((scope) => void scope.get('/page', () => 'public'), { prefix: '/public' });

    assert.equal(await (await app.request('/admin/panel')).text(), 'panel');
    assert.deepEqual(seen.splice(0), ['root /admin/panel', 'admin /admin/panel']);
    assert.equal(await (await app.request('/admin/child/deep')).text(), 'deep');
    assert.deepEqual(seen.splice(0), ['root /admin/child/deep', 'admin /admin/child/deep', 'child /admin/child/deep']);
    const sibling = await app.request('/public/page');
    assert.equal(await sibling.text(), 'public');
    assert.equal(sibling.headers.get('x-admin'), null, 'scoped middleware stays in its scope');
    assert.deepEqual(seen.splice(0), ['root /public/page']);
    assert.equal(await (await app.request('/')).text(), 'root');
    assert.deepEqual(seen.splice(0), ['root /']);
    assert.deepEqual(await (await app.request('/admin/fail')).json(), { error: 'admin error handler' });
    assert.equal((await app.request('/public/nowhere')).status, 404);
    assert.deepEqual(
      seen.splice(0),
      ['root /admin/fail', 'admin /admin/fail', 'root /public/nowhere'],
      'the scope hook does not run for 404s outside it',
    );
    await app.close();
  });

  test('global plugins hook and decorate the scope they are registered in; options reach the plugin', async () => {
    const app = new App();
    const seen: unknown[] = [];
    const tagging = definePlugin({ name: 'tagging', global: true }, (scope: Scope, options: { tag: string }) => {
      scope.addHook('onSend', (_req, res) => void res.header('x-tag', options.tag));
    });
    await app.register(tagging, { tag: 'v1' });
    await app.register(
      (scope, options: { n: number }) => {
        seen.push(options);
        scope.get('/x', () => 'x');
      },
      { prefix: '/s', n: 2 },
    );
    app.get('/', () => 'root');
    assert.equal((await app.request('/')).headers.get('x-tag'), 'v1');
    assert.equal((await app.request('/s/x')).headers.get('x-tag'), 'v1');
    assert.deepEqual(seen, [{ n: 2 }], 'the prefix is not passed on as an option');
    await app.close();
  });

  test('attach(prefix, router) still works, inside a scope too (the router gets the scope hooks)', async () => {
    const seen: string[] = [];
    const app = new App();
    const users = new Router().get('/:id', (req) => ({ id: req.params.id }));
    app.attach('/users', users);
    await app.register(
      (scope) => {
        scope.addHook('preHandler', () => void seen.push('scoped'));
        scope.attach(
          '/r',
          new Router().get('/x', () => 'x'),
        );
      },
      { prefix: '/s' },
    );
    assert.deepEqual(await (await app.request('/users/7')).json(), { id: '7' });
    assert.equal(await (await app.request('/s/r/x')).text(), 'x');
    assert.deepEqual(seen, ['scoped']);
    await app.close();
  });

  test('an async plugin not awaited is waited for by listen()', async () => {
    const app = new App();
    void app.register(async (scope) => {
      await new Promise((r) => setTimeout(r, 20));
      scope.get('/late', () => 'ready');
    });
    assert.equal(await (await app.request('/late')).text(), 'ready');
    await app.close();
  });
});

describe('naming, dependencies, bad input', () => {
  test('a named plugin registered twice is a clear error', async () => {
    const app = new App();
    const db = definePlugin({ name: 'db' }, () => {});
    await app.register(db);
    assert.throws(() => app.register(db), /plugin "db" is registered twice/);
    await app.register(async (scope) => {
      assert.throws(() => scope.register(db), /plugin "db" is registered twice/, 'across scopes too');
    });
  });

  test('a missing dependency fails the start, naming it; order of registration does not matter', async () => {
    const app = new App();
    await app.register(definePlugin({ name: 'users', dependencies: ['db'] }, () => {}));
    await assert.rejects(app.request('/'), /plugin "users" depends on plugin "db", which is not registered/);

    const ok = new App();
    await ok.register(definePlugin({ name: 'users', dependencies: ['db'] }, () => {}));
    await ok.register(definePlugin({ name: 'db' }, () => {}));
    assert.equal((await ok.request('/')).status, 404);
    await ok.close();
  });

  test('a plugin that throws or rejects: register rejects with the plugin named', async () => {
    const app = new App();
    await assert.rejects(
      app.register(
        definePlugin({ name: 'broken' }, () => {
          throw new Error('no config');
        }),
      ),
      /plugin "broken": no config/,
    );
    await assert.rejects(
      app.register(async function loader() {
        throw new HttpError(500, 'async failure');
      }),
      /plugin loader: async failure/,
    );
  });

  test('a failing plugin not awaited: no unhandled rejection; the start fails with its error', async () => {
    const app = new App();
    void app.register(
      definePlugin({ name: 'sync-bug' }, () => {
        throw new Error('sync bug');
      }),
    );
    void app.register(async () => {
      throw new Error('async bug');
    });
    await new Promise((r) => setTimeout(r, 10)); // an unhandled rejection would fail the test here
    await assert.rejects(app.request('/'), /plugin "sync-bug": sync bug/);
  });

  test('bad arguments: a non-function plugin, bad options, bad meta, global with a prefix', () => {
    const app = new App();
    assert.throws(() => app.register({} as never), /register\(\) needs a plugin function/);
    assert.throws(() => app.register(() => {}, 'x' as never), /options must be an object/);
    assert.throws(() => app.register(() => {}, { prefix: 'no-slash' }), /Prefix must start with "\/"/);
    assert.throws(() => definePlugin({ name: '' }, () => {}), /name must be a non-empty string/);
    assert.throws(() => definePlugin({ dependencies: 'db' as never }, () => {}), /dependencies must be a list/);
    assert.throws(() => definePlugin({ label: 1 } as never, () => {}), /unknown meta "label"/);
    assert.throws(() => definePlugin({}, null as never), /fn must be a function/);
    const g = definePlugin({ global: true }, () => {});
    assert.throws(() => app.register(g, { prefix: '/x' }), /is global: it takes no prefix/);
  });
});
