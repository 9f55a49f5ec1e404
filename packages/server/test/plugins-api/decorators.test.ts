// Decorators (docs/plugins.md): declared before start, one object shape per request.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { App, type Request, type Response } from '../../src/index.ts';

// %HaveSameMap compares hidden classes; natives syntax is allowed for code compiled after this.
setFlagsFromString('--allow-natives-syntax');
const haveSameMap = runInNewContext('(a, b) => %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

describe('decorators', () => {
  test('decorateRequest / decorateReply: fields start at their value per request, methods are shared', async () => {
    const app = new App();
    app.decorateRequest('user' as never, null as never);
    app.decorateRequest(
      'greet' as never,
      function (this: Request & { user: string | null }) {
        return `hi ${this.user ?? 'nobody'}`;
      } as never,
    );
    app.decorateReply('sentBy' as never, 'tachyon' as never);
    app.addHook('preHandler', (req) => {
      const r = req as Request & { user: string | null };
      if (req.header('x-user')) r.user = req.header('x-user')!;
    });
    app.get('/', (req, res) => {
      const r = req as Request & { user: string | null; greet(): string };
      return { user: r.user, greet: r.greet(), sentBy: (res as Response & { sentBy: string }).sentBy };
    });
    assert.deepEqual(await (await app.request('/', { headers: { 'x-user': 'ann' } })).json(), {
      user: 'ann',
      greet: 'hi ann',
      sentBy: 'tachyon',
    });
    assert.deepEqual(
      await (await app.request('/')).json(),
      { user: null, greet: 'hi nobody', sentBy: 'tachyon' },
      'a fresh value per request',
    );
    await app.close();
  });

  test('every request of a route has one hidden class, set or not (%HaveSameMap)', async () => {
    const app = new App();
    app.decorateRequest('user' as never, null as never);
    app.decorateRequest('role' as never, 'guest' as never);
    const seen: Request[] = [];
    app.addHook('onRequest', (req) => {
      if (req.header('x-user')) (req as unknown as { user: string }).user = 'ann';
    });
    app.get('/a', (req) => {
      seen.push(req);
      return 'a';
    });
    for (const headers of [{}, { 'x-user': '1' }, {}] as Record<string, string>[]) await (await app.request('/a', { headers })).text();
    assert.equal(seen.length, 3);
    assert.ok(haveSameMap(seen[0]!, seen[1]!) && haveSameMap(seen[1]!, seen[2]!), 'one shape per request');
    assert.equal((seen[0] as unknown as { user: unknown }).user, null);
    assert.ok(Object.keys(seen[0]!).includes('user'), 'the field exists from birth');
    await app.close();
  });

  test("decorations are encapsulated: a scope's request fields are not on sibling or root requests", async () => {
    const app = new App();
    app.decorateRequest('appWide' as never, 1 as never);
    await app.register(
      (scope) => {
        scope.decorateRequest('scoped' as never, 'yes' as never);
        scope.get('/in', (req) => ({ scoped: (req as unknown as { scoped: string }).scoped ?? null }));
      },
      { prefix: '/s' },
    );
    await app.register(
      (scope) => {
        scope.get('/out', (req) => ({ scoped: 'scoped' in req }));
      },
      { prefix: '/t' },
    );
    assert.deepEqual(await (await app.request('/s/in')).json(), { scoped: 'yes' });
    assert.deepEqual(await (await app.request('/t/out')).json(), { scoped: false });
    await app.close();
  });

  test('decorate: a value on the app and on scopes registered below it, not on siblings', async () => {
    const app = new App();
    app.decorate('db' as never, { name: 'main' } as never);
    let child: unknown;
    let sibling: unknown;
    await app.register((scope) => {
      scope.decorate('cache' as never, 42 as never);
      child = [(scope as unknown as { db: unknown }).db, (scope as unknown as { cache: unknown }).cache];
    });
    await app.register((scope) => void (sibling = 'cache' in scope));
    assert.deepEqual(child, [{ name: 'main' }, 42]);
    assert.equal(sibling, false);
    assert.deepEqual((app as unknown as { db: unknown }).db, { name: 'main' });
  });

  test('clashes and bad values are errors at declaration', () => {
    const app = new App();
    const req =
      (name: string, value: unknown = null) =>
      () =>
        app.decorateRequest(name as never, value as never);
    const reply =
      (name: string, value: unknown = null) =>
      () =>
        app.decorateReply(name as never, value as never);
    assert.throws(req('json'), /decorateRequest\("json"\): clashes with the built-in Request member "json"/);
    assert.throws(req('params'), /clashes with the built-in Request member "params"/);
    assert.throws(req('header'), /clashes with the built-in Request member "header"/);
    assert.throws(req('method'), /clashes/);
    assert.throws(reply('json'), /decorateReply\("json"\): clashes with the built-in Response member "json"/);
    assert.throws(reply('header'), /clashes/);
    assert.throws(req('_secret'), /reserved for the framework/);
    assert.throws(req(''), /needs a name/);
    assert.throws(req('session', {}), /an object would be shared by every request; declare null/);
    app.decorateRequest('user' as never, null as never);
    assert.throws(req('user'), /decorateRequest\("user"\): already declared/);
    assert.throws(() => app.decorate('get' as never, 1 as never), /decorate\("get"\): clashes/);
    assert.throws(() => app.decorate('listen' as never, 1 as never), /clashes/);
  });
});
