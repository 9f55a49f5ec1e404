import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { App, HttpError, Router, type Middleware } from '../../src/index.ts';
import { recordingLogger, sleep, start } from '../helpers.ts';

const tag =
  (log: string[], name: string): Middleware =>
  (req, res, next) => {
    log.push(name);
    return next();
  };

describe('middleware', () => {
  test('global → prefix → router → route order, added before or after routes', async () => {
    const log: string[] = [];
    const app = new App();
    const admin = new Router();
    admin.use(tag(log, 'router'));
    admin.get('/panel', tag(log, 'route-mw'), (req, res) => {
      log.push('handler');
      res.end('ok');
    });
    app.attach('/admin', admin);
    app.use(tag(log, 'global'));
    app.use('/admin', tag(log, 'prefix'));
    app.use('/other', tag(log, 'other-prefix'));
    const srv = await start(app);
    try {
      assert.equal(await (await fetch(srv.url + '/admin/panel')).text(), 'ok');
      assert.deepEqual(log, ['global', 'prefix', 'router', 'route-mw', 'handler']);
    } finally {
      await srv.close();
    }
  });

  test('prefix middleware applies on segment boundaries only', async () => {
    const seen: string[] = [];
    const app = new App();
    app.use('/admin', (req, res, next) => {
      seen.push(req.path);
      return next();
    });
    app.get('/admin', () => 'a');
    app.get('/administrator', () => 'b');
    app.get('/admin/x', () => 'c');
    const srv = await start(app);
    try {
      for (const p of ['/admin', '/administrator', '/admin/x']) await (await fetch(srv.url + p)).text();
      assert.deepEqual(seen, ['/admin', '/admin/x']);
    } finally {
      await srv.close();
    }
  });

  test('prefix middleware is checked at runtime when a :param overlaps the prefix', async () => {
    const seen: string[] = [];
    const app = new App();
    app.use('/admin', (req, res, next) => {
      seen.push(req.path);
      return next();
    });
    app.get('/:section/page', (req) => req.params.section);
    const srv = await start(app);
    try {
      await (await fetch(srv.url + '/admin/page')).text();
      await (await fetch(srv.url + '/public/page')).text();
      assert.deepEqual(seen, ['/admin/page']);
    } finally {
      await srv.close();
    }
  });

  test('await next() gives onion order across async middleware', async () => {
    const log: string[] = [];
    const app = new App();
    app.use(async (req, res, next) => {
      log.push('a:in');
      await next();
      log.push('a:out');
    });
    app.use(async (req, res, next) => {
      log.push('b:in');
      await sleep(5);
      await next();
      log.push('b:out');
    });
    app.get('/', async () => {
      await sleep(5);
      log.push('handler');
      return { ok: true };
    });
    const srv = await start(app);
    try {
      assert.deepEqual(await (await fetch(srv.url + '/')).json(), { ok: true });
      assert.deepEqual(log, ['a:in', 'b:in', 'handler', 'b:out', 'a:out']);
    } finally {
      await srv.close();
    }
  });

  test('a middleware may answer without calling next', async () => {
    let reached = false;
    const app = new App();
    app.use('/private', (req, res) => res.status(401).json({ error: 'login first' }));
    app.get('/private/x', () => {
      reached = true;
      return 'secret';
    });
    const srv = await start(app);
    try {
      const r = await fetch(srv.url + '/private/x');
      assert.equal(r.status, 401);
      assert.equal(reached, false);
    } finally {
      await srv.close();
    }
  });

  test('next(err) and thrown errors go to the error handler', async () => {
    const app = new App();
    app.get(
      '/next-err',
      (req, res, next) => next(new HttpError(418, 'teapot')),
      () => 'never',
    );
    app.get('/throw', () => {
      throw new HttpError(409, 'conflict');
    });
    const srv = await start(app);
    try {
      const a = await fetch(srv.url + '/next-err');
      assert.equal(a.status, 418);
      assert.deepEqual(await a.json(), { error: 'teapot' });
      assert.equal((await fetch(srv.url + '/throw')).status, 409);
    } finally {
      await srv.close();
    }
  });

  test('calling next() twice is an error, not a double response', async () => {
    const { entries, logger } = recordingLogger();
    const app = new App({ logger });
    let calls = 0;
    app.get(
      '/',
      async (req, res, next) => {
        await next();
        await next();
      },
      () => {
        calls++;
        return 'once';
      },
    );
    const srv = await start(app);
    try {
      assert.equal(await (await fetch(srv.url + '/')).text(), 'once');
      await sleep(20);
      assert.equal(calls, 1);
      assert.ok(entries.some((e) => e.level === 'error' && /more than once/.test(String((e.obj as { err: Error }).err?.message))));
    } finally {
      await srv.close();
    }
  });

  test('req.locals carries data from middleware to handler', async () => {
    const app = new App();
    app.use((req, res, next) => {
      req.locals.user = { name: 'ada' };
      return next();
    });
    app.get('/', (req) => req.locals.user);
    const srv = await start(app);
    try {
      assert.deepEqual(await (await fetch(srv.url + '/')).json(), { name: 'ada' });
    } finally {
      await srv.close();
    }
  });

  test('global middleware also runs for 404s and 405s (e.g. CORS, logging)', async () => {
    const app = new App();
    app.use((req, res, next) => {
      res.header('x-seen', '1');
      return next();
    });
    app.get('/only-get', () => 'x');
    const srv = await start(app);
    try {
      assert.equal((await fetch(srv.url + '/missing')).headers.get('x-seen'), '1');
      assert.equal((await fetch(srv.url + '/only-get', { method: 'POST' })).headers.get('x-seen'), '1');
    } finally {
      await srv.close();
    }
  });
});
