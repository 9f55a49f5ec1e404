import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { App, HttpError, cors } from '../../src/index.ts';
import { start, type Running } from '../helpers.ts';

const preflight = (url: string, origin: string, extra: Record<string, string> = {}) =>
  fetch(url, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'PUT', ...extra } });

function vary(res: globalThis.Response): string[] {
  return (res.headers.get('vary') ?? '')
    .split(',')
    .map((v) => v.trim().toLowerCase())
    .filter(Boolean);
}

describe('cors: preflight', () => {
  let srv: Running;
  const reached: string[] = [];
  before(async () => {
    const app = new App();
    app.use(cors({ origin: ['https://a.example', 'https://b.example'], maxAge: 600, credentials: true }));
    app.get('/only-get', (req) => {
      reached.push(`GET ${req.path}`);
      return 'get';
    });
    app.options('/explicit', (req) => {
      reached.push('OPTIONS handler');
      return 'options';
    });
    app.get('/explicit', () => 'x');
    app.get('/boom', () => {
      throw new HttpError(400, 'nope');
    });
    srv = await start(app);
  });
  after(() => srv.close());

  test('is answered 204 on a path with only GET, without reaching a handler', async () => {
    const res = await preflight(srv.url + '/only-get', 'https://a.example', { 'access-control-request-headers': 'x-token, content-type' });
    assert.equal(res.status, 204);
    assert.equal(await res.text(), '');
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://a.example');
    assert.equal(res.headers.get('access-control-allow-credentials'), 'true');
    assert.equal(res.headers.get('access-control-allow-methods'), 'GET, HEAD, PUT, POST, DELETE, PATCH');
    assert.equal(res.headers.get('access-control-allow-headers'), 'x-token, content-type');
    assert.equal(res.headers.get('access-control-max-age'), '600');
    assert.deepEqual(vary(res).sort(), ['access-control-request-headers', 'origin']);
    assert.deepEqual(reached, []);
  });

  test('is answered on a path with no route at all, and before an explicit OPTIONS handler', async () => {
    const none = await preflight(srv.url + '/nothing/here', 'https://b.example');
    assert.equal(none.status, 204);
    assert.equal(none.headers.get('access-control-allow-origin'), 'https://b.example');
    const explicit = await preflight(srv.url + '/explicit', 'https://a.example');
    assert.equal(explicit.status, 204);
    assert.deepEqual(reached, []);
  });

  test('from a refused origin: 204 without Allow-* headers (the browser fails it), handler not reached', async () => {
    const res = await preflight(srv.url + '/only-get', 'https://evil.example');
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    assert.equal(res.headers.get('access-control-allow-methods'), null);
    assert.equal(res.headers.get('access-control-allow-credentials'), null);
    assert.ok(vary(res).includes('origin'));
    assert.deepEqual(reached, []);
  });

  test('an OPTIONS without Access-Control-Request-Method is not a preflight: it reaches the routes', async () => {
    const plain = await fetch(srv.url + '/explicit', { method: 'OPTIONS', headers: { origin: 'https://a.example' } });
    assert.equal(await plain.text(), 'options');
    assert.deepEqual(reached, ['OPTIONS handler']);
    const allow = await fetch(srv.url + '/only-get', { method: 'OPTIONS' });
    assert.equal(allow.status, 204);
    assert.match(allow.headers.get('allow') ?? '', /GET/);
    reached.length = 0;
  });

  test('actual requests: origin reflected, Vary: Origin, also on errors; none for refused or absent origins', async () => {
    const ok = await fetch(srv.url + '/only-get', { headers: { origin: 'https://b.example' } });
    assert.equal(await ok.text(), 'get');
    assert.equal(ok.headers.get('access-control-allow-origin'), 'https://b.example');
    assert.equal(ok.headers.get('access-control-allow-credentials'), 'true');
    assert.deepEqual(vary(ok), ['origin']);
    const err = await fetch(srv.url + '/boom', { headers: { origin: 'https://a.example' } });
    assert.equal(err.status, 400);
    assert.equal(err.headers.get('access-control-allow-origin'), 'https://a.example');
    const refused = await fetch(srv.url + '/only-get', { headers: { origin: 'https://evil.example' } });
    assert.equal(refused.status, 200);
    assert.equal(refused.headers.get('access-control-allow-origin'), null);
    assert.deepEqual(vary(refused), ['origin']);
    const sameOrigin = await fetch(srv.url + '/only-get');
    assert.equal(sameOrigin.headers.get('access-control-allow-origin'), null);
    assert.deepEqual(vary(sameOrigin), ['origin']);
    reached.length = 0;
  });
});

describe('cors: origin forms', () => {
  async function serve(options: Parameters<typeof cors>[0]) {
    const app = new App();
    app.use(cors(options));
    app.get('/', (req, res) => {
      res.header('x-total', '3');
      return 'ok';
    });
    return start(app);
  }
  const get = (srv: Running, origin?: string) => fetch(srv.url + '/', { headers: origin ? { origin } : {} });

  test("'*' (the default): * for everyone, no Vary, Expose-Headers on actual requests only", async () => {
    const srv = await serve({ exposeHeaders: ['x-total'] });
    try {
      const res = await get(srv, 'https://any.example');
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      assert.equal(res.headers.get('access-control-expose-headers'), 'x-total');
      assert.equal(res.headers.get('vary'), null);
      assert.equal(res.headers.get('access-control-allow-credentials'), null);
      assert.equal((await get(srv)).headers.get('access-control-allow-origin'), '*');
      const pre = await preflight(srv.url + '/', 'https://any.example');
      assert.equal(pre.headers.get('access-control-allow-origin'), '*');
      assert.equal(pre.headers.get('access-control-expose-headers'), null);
    } finally {
      await srv.close();
    }
  });

  test('one origin string: sent as is, whatever the request says; no Vary', async () => {
    const srv = await serve({ origin: 'https://app.example', headers: ['x-token'], methods: ['get', 'post'] });
    try {
      const res = await get(srv, 'https://other.example');
      assert.equal(res.headers.get('access-control-allow-origin'), 'https://app.example');
      assert.equal(res.headers.get('vary'), null);
      const pre = await preflight(srv.url + '/', 'https://app.example', { 'access-control-request-headers': 'x-other' });
      assert.equal(pre.headers.get('access-control-allow-headers'), 'x-token');
      assert.equal(pre.headers.get('access-control-allow-methods'), 'GET, POST');
      assert.equal(pre.headers.get('access-control-max-age'), null);
    } finally {
      await srv.close();
    }
  });

  test('RegExp', async () => {
    const srv = await serve({ origin: /^https:\/\/([a-z]+\.)?example\.com$/ });
    try {
      assert.equal((await get(srv, 'https://shop.example.com')).headers.get('access-control-allow-origin'), 'https://shop.example.com');
      assert.equal((await get(srv, 'https://shop.example.com')).headers.get('access-control-allow-origin'), 'https://shop.example.com');
      assert.equal((await get(srv, 'https://example.com.evil.net')).headers.get('access-control-allow-origin'), null);
      assert.deepEqual(vary(await get(srv, 'https://x.evil.net')), ['origin']);
    } finally {
      await srv.close();
    }
  });

  test('function, sync and async: true reflects, a string is sent, false refuses; sees the request', async () => {
    const seen: string[] = [];
    const sync = await serve({
      origin: (origin, req) => {
        seen.push(req.path);
        return origin.endsWith('.trusted') ? true : origin === 'https://mapped' ? 'https://canonical' : false;
      },
    });
    const async = await serve({ origin: async (origin) => await Promise.resolve(origin === 'https://ok.example') });
    try {
      assert.equal((await get(sync, 'https://a.trusted')).headers.get('access-control-allow-origin'), 'https://a.trusted');
      assert.equal((await get(sync, 'https://mapped')).headers.get('access-control-allow-origin'), 'https://canonical');
      assert.equal((await get(sync, 'https://no')).headers.get('access-control-allow-origin'), null);
      assert.deepEqual(seen, ['/', '/', '/']);
      const ok = await get(async, 'https://ok.example');
      assert.equal(await ok.text(), 'ok');
      assert.equal(ok.headers.get('access-control-allow-origin'), 'https://ok.example');
      assert.deepEqual(vary(ok), ['origin']);
      assert.equal((await get(async, 'https://no.example')).headers.get('access-control-allow-origin'), null);
      const pre = await preflight(async.url + '/', 'https://ok.example');
      assert.equal(pre.status, 204);
      assert.equal(pre.headers.get('access-control-allow-origin'), 'https://ok.example');
    } finally {
      await sync.close();
      await async.close();
    }
  });

  test('a function answering * under credentials reflects the origin instead: never * with credentials', async () => {
    const srv = await serve({ origin: () => '*', credentials: true });
    try {
      const res = await get(srv, 'https://site.example');
      assert.equal(res.headers.get('access-control-allow-origin'), 'https://site.example');
      assert.equal(res.headers.get('access-control-allow-credentials'), 'true');
    } finally {
      await srv.close();
    }
  });

  test('an origin function that throws: the error handlers answer (500), the process lives on', async () => {
    const srv = await serve({
      origin: () => {
        throw new Error('lookup failed');
      },
    });
    try {
      assert.equal((await get(srv, 'https://x.example')).status, 500);
      assert.equal((await get(srv)).status, 200);
    } finally {
      await srv.close();
    }
  });
});

describe('cors: options are checked at setup', () => {
  test('explicit * with credentials throws', () => {
    assert.throws(() => cors({ credentials: true }), /origin '\*' cannot be combined with credentials/);
    assert.throws(() => cors({ origin: '*', credentials: true }), TypeError);
  });
  test('bad values give clear TypeErrors', () => {
    assert.throws(() => cors({ origin: 'https://x.example/' }), /scheme:\/\/host/);
    assert.throws(() => cors({ origin: 'example.com' }), /scheme:\/\/host/);
    assert.throws(() => cors({ origin: [] }), /empty/);
    assert.throws(() => cors({ origin: ['https://a.example', '*'] }), /cannot be part of an origin list/);
    assert.throws(() => cors({ origin: /x/g }), /g or y flag/);
    assert.throws(() => cors({ origin: 42 as never }), /origin must be/);
    assert.throws(() => cors({ methods: ['GET', 'BAD METHOD'] }), /invalid entry "BAD METHOD" in methods/);
    assert.throws(() => cors({ headers: 'x-token' as never }), /headers must be an array/);
    assert.throws(() => cors({ exposeHeaders: ['x\r\ny'] }), /exposeHeaders/);
    assert.throws(() => cors({ maxAge: -1 }), /maxAge/);
    assert.throws(() => cors({ maxAge: 1.5 }), /maxAge/);
    assert.throws(() => cors({ credentials: 'yes' as never }), /credentials must be a boolean/);
    assert.throws(() => cors({ orgin: '*' } as never), /unknown option "orgin"/);
    assert.throws(() => cors(null as never), /options must be an object/);
  });
});
