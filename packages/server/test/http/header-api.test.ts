// The header API a plugin uses (docs/response.md, docs/request.md): req.header(), req.hasBody,
// res.header(), res.vary(), prepareHeaders() + res.setHeaders(). Real requests: app.request()
// for what a client sees, raw sockets where the exact header lines matter.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { App, PreparedHeaders, prepareHeaders, type Request, type Response } from '../../src/index.ts';
import { rawRequest, start, type Running } from '../helpers.ts';

/** The handler's TypeError message as the body (status 500), or 'ok'. */
function attempt(fn: (req: Request, res: Response) => void) {
  return (req: Request, res: Response) => {
    try {
      fn(req, res);
    } catch (err) {
      return res.status(500).send(`${(err as Error).name}: ${(err as Error).message}`);
    }
    if (!res.finished) res.send('ok');
  };
}

/** Every line of header `name` in a raw HTTP response, values as sent. */
function lines(raw: string, name: string): string[] {
  const head = raw.split('\r\n\r\n')[0]!;
  return head
    .split('\r\n')
    .slice(1)
    .filter((l) => l.toLowerCase().startsWith(`${name}:`))
    .map((l) => l.slice(name.length + 1).trim());
}

describe('res.vary()', () => {
  const app = new App();
  app.get(
    '/twice',
    attempt((req, res) => res.vary('Origin').vary('origin').vary('ORIGIN')),
  );
  app.get(
    '/merge',
    attempt((req, res) => res.header('vary', 'Accept-Encoding').vary('accept-encoding').vary('Origin')),
  );
  app.get(
    '/star',
    attempt((req, res) => res.vary('origin').vary('*').vary('accept')),
  );
  app.get(
    '/star-in-list',
    attempt((req, res) => res.header('vary', 'Accept, *').vary('origin')),
  );
  app.get(
    '/spaces',
    attempt((req, res) => res.header('vary', ' accept ,\tOrigin ').vary('origin').vary('cookie')),
  );
  app.get(
    '/prefix',
    attempt((req, res) => res.header('vary', 'origin-x').vary('origin')),
  );
  app.get(
    '/bad',
    attempt((req, res) => res.vary('x y')),
  );
  app.get(
    '/injection',
    attempt((req, res) => res.vary('origin\r\nx-injected: 1')),
  );

  test('a field is listed once, whatever its case', async () => {
    const res = await app.request('/twice');
    assert.equal(res.headers.get('vary'), 'origin');
  });

  test('joins an existing Vary value and keeps what it already lists', async () => {
    const res = await app.request('/merge');
    assert.equal(res.headers.get('vary'), 'Accept-Encoding, origin');
  });

  test("vary('*') makes Vary `*`, and nothing is added to `*`", async () => {
    assert.equal((await app.request('/star')).headers.get('vary'), '*');
    assert.equal((await app.request('/star-in-list')).headers.get('vary'), 'Accept, *');
  });

  test('list items are compared trimmed, whole (origin-x is not origin)', async () => {
    assert.equal((await app.request('/spaces')).headers.get('vary'), ' accept ,\tOrigin , cookie'.trim());
    assert.equal((await app.request('/prefix')).headers.get('vary'), 'origin-x, origin');
  });

  test('a name that is not a header token is a TypeError, CR/LF included (never sent)', async () => {
    const bad = await app.request('/bad');
    assert.equal(bad.status, 500);
    assert.match(await bad.text(), /^TypeError: Invalid header name/);
    const inj = await app.request('/injection');
    assert.equal(inj.status, 500);
    assert.equal(inj.headers.get('x-injected'), null);
    assert.match(await inj.text(), /^TypeError: Invalid header name/);
  });
});

describe('res.vary() with compression and cors: one line, each field once', () => {
  let srv: Running;
  before(async () => {
    const app = new App({ compression: { threshold: 1 } });
    app.use((req, res, next) => {
      res.vary('Origin');
      return next();
    });
    app.get('/', (req, res) => res.vary('origin').type('text/plain').end('x'.repeat(2000)));
    srv = await start(app);
  });
  after(() => srv.close());

  test('raw response', async () => {
    const raw = await rawRequest(srv.port, 'GET / HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n');
    assert.deepEqual(lines(raw, 'vary'), ['origin, accept-encoding']);
    assert.deepEqual(lines(raw, 'content-encoding'), ['gzip']);
  });
});

describe('prepareHeaders(): checked once, refused at prepare time', () => {
  const refused: [string, unknown, RegExp][] = [
    ['a name with a space', { 'x frame': 'DENY' }, /Invalid header name/],
    ['an empty name', { '': 'x' }, /Invalid header name/],
    ['a name with a colon', { 'x-a:': 'x' }, /Invalid header name/],
    ['CRLF in a value (header injection)', { 'x-a': 'ok\r\nset-cookie: stolen=1' }, /CR, LF or NUL/],
    ['a bare LF in a value', { 'x-a': 'ok\nx-b: 1' }, /CR, LF or NUL/],
    ['NUL in a value', { 'x-a': 'a\0b' }, /CR, LF or NUL/],
    ['CRLF inside an array value', { link: ['</a>; rel=preload', '</b>\r\nx-b: 1'] }, /CR, LF or NUL/],
    // Values up to 64 characters are scanned by a loop, longer ones by a regexp: both refuse.
    ['LF as the 64th character', { 'x-a': `${'a'.repeat(63)}\n` }, /CR, LF or NUL/],
    ['CR as the 65th character', { 'x-a': `${'a'.repeat(64)}\r` }, /CR, LF or NUL/],
    ['NUL in a long value', { 'content-security-policy': `default-src 'self'; ${'img-src https: '.repeat(20)}\0` }, /CR, LF or NUL/],
    ['CRLF at the start of a long value', { 'x-a': `\r\n${'b'.repeat(200)}` }, /CR, LF or NUL/],
    ['Content-Length (uWS frames the body)', { 'Content-Length': '10' }, /set by the server/],
    ['Transfer-Encoding', { 'transfer-encoding': 'chunked' }, /set by the server/],
    ['a name given twice in two cases', { 'X-A': '1', 'x-a': '2' }, /given twice/],
    ['an empty list of values', { 'x-a': [] }, /empty list/],
    ['an object value', { 'x-a': { v: 1 } }, /must be a string/],
    ['undefined', { 'x-a': undefined }, /must be a string/],
    ['NaN', { 'x-a': Number.NaN }, /must be a string/],
    ['null instead of an object', null, /expected an object/],
    ['an array instead of an object', [['x-a', '1']], /expected an object/],
  ];
  for (const [what, input, message] of refused) {
    test(what, () => {
      assert.throws(
        () => prepareHeaders(input as never),
        (err: Error) => err instanceof TypeError && message.test(err.message),
      );
    });
  }

  test('values without CR, LF or NUL are kept as given, short and long (tabs, Latin-1, empty)', () => {
    const values = [
      '',
      'a\tb',
      'caf\u00e9',
      'x'.repeat(64),
      `${'y'.repeat(64)}\u00ff`,
      `default-src 'self'; ${'img-src https: '.repeat(40)}`,
    ];
    for (const value of values) assert.deepEqual(prepareHeaders({ 'x-a': value }).lines, ['x-a', value]);
  });

  test('names are lower-cased, order kept, arrays give one line per item, numbers become text', () => {
    const h = prepareHeaders({ 'X-Frame-Options': 'DENY', link: ['</a.css>; rel=preload', '</b.js>; rel=preload'], 'Retry-After': 30 });
    assert.deepEqual(h.lines, [
      'x-frame-options',
      'DENY',
      'link',
      '</a.css>; rel=preload',
      'link',
      '</b.js>; rel=preload',
      'retry-after',
      '30',
    ]);
    assert.deepEqual(h.names, ['x-frame-options', 'link', 'retry-after']);
    assert.ok(h instanceof PreparedHeaders);
    assert.ok(Object.isFrozen(h) && Object.isFrozen(h.lines) && Object.isFrozen(h.names));
  });
});

describe('res.setHeaders()', () => {
  let srv: Running;
  const security = prepareHeaders({
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    link: ['</a>; rel=preload', '</b>; rel=preload'],
  });
  const app = new App();
  app.get('/only', (req, res) => res.setHeaders(security).send('x'));
  app.get('/then-more', (req, res) => res.setHeaders(security).header('x-extra', '1').header('x-frame-options', 'SAMEORIGIN').send('x'));
  app.get('/replaces', (req, res) =>
    res
      .header('x-frame-options', 'SAMEORIGIN')
      .appendHeader('link', '</old>')
      .appendHeader('link', '</older>')
      .header('x-kept', 'yes')
      .setHeaders(security)
      .send('x'),
  );
  // After a prepared set, every other way of changing the headers: the response must carry
  // the change (a prepared set is written from its bytes only while it is all there is).
  const withVary = prepareHeaders({ vary: 'Accept-Encoding', 'x-name': 'café' });
  app.get('/set-then-vary', (req, res) => res.setHeaders(withVary).vary('Origin').end('x'));
  app.get('/set-then-remove', (req, res) => res.setHeaders(security).removeHeader('link').end('x'));
  app.get('/set-then-set', (req, res) => res.setHeaders(security).setHeaders(withVary).end('x'));
  app.get('/set-then-append', (req, res) => res.setHeaders(security).appendHeader('link', '</c>').end('x'));
  app.get('/set-then-status', (req, res) => res.setHeaders(withVary).status(404).end('x'));
  app.get('/set-then-header', (req, res) => res.setHeaders(security).header('x-frame-options', 'SAMEORIGIN').end('x'));
  app.get('/unprepared', (req, res) => res.header('x-name', 'café').end('x'));
  app.get(
    '/forged',
    attempt((req, res) => res.setHeaders({ lines: ['x-a', 'b\r\nx-injected: 1'], names: ['x-a'] } as unknown as PreparedHeaders)),
  );
  before(async () => {
    srv = await start(app);
  });
  after(() => srv.close());

  test('sends every line of the set', async () => {
    const raw = await rawRequest(srv.port, 'GET /only HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.deepEqual(lines(raw, 'x-frame-options'), ['DENY']);
    assert.deepEqual(lines(raw, 'x-content-type-options'), ['nosniff']);
    assert.deepEqual(lines(raw, 'link'), ['</a>; rel=preload', '</b>; rel=preload']);
  });

  test('the set is copied: headers added after it do not leak into the next response', async () => {
    const first = await app.request('/then-more');
    assert.equal(first.headers.get('x-extra'), '1');
    assert.equal(first.headers.get('x-frame-options'), 'SAMEORIGIN');
    const second = await app.request('/only');
    assert.equal(second.headers.get('x-extra'), null);
    assert.equal(second.headers.get('x-frame-options'), 'DENY');
    assert.deepEqual(security.lines.slice(0, 2), ['x-frame-options', 'DENY']);
  });

  test('replaces earlier lines of the same names, keeps the others', async () => {
    const raw = await rawRequest(srv.port, 'GET /replaces HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.deepEqual(lines(raw, 'x-frame-options'), ['DENY']);
    assert.deepEqual(lines(raw, 'link'), ['</a>; rel=preload', '</b>; rel=preload']);
    assert.deepEqual(lines(raw, 'x-kept'), ['yes']);
  });

  test('a change after the set is sent: vary, remove, a second set, append, a header replaced, a status', async () => {
    const get = (path: string) => rawRequest(srv.port, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    assert.deepEqual(lines(await get('/set-then-vary'), 'vary'), ['Accept-Encoding, origin']);
    const removed = await get('/set-then-remove');
    assert.deepEqual(lines(removed, 'link'), []);
    assert.deepEqual(lines(removed, 'x-frame-options'), ['DENY']);
    const both = await get('/set-then-set');
    assert.deepEqual(lines(both, 'x-frame-options'), ['DENY']);
    assert.deepEqual(lines(both, 'vary'), ['Accept-Encoding']);
    assert.deepEqual(lines(await get('/set-then-append'), 'link'), ['</a>; rel=preload', '</b>; rel=preload', '</c>']);
    assert.deepEqual(lines(await get('/set-then-header'), 'x-frame-options'), ['SAMEORIGIN']);
    const status = await get('/set-then-status');
    assert.match(status, /^HTTP\/1\.1 404 Not Found\r\n/);
    assert.deepEqual(lines(status, 'vary'), ['Accept-Encoding']);
  });

  test('a prepared value goes out as the same bytes as res.header() sends (UTF-8)', async () => {
    const bytesOf = async (path: string) => {
      const raw = await rawRequest(srv.port, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      return lines(raw, 'x-name');
    };
    const prepared = await bytesOf('/set-then-status');
    assert.deepEqual(prepared, await bytesOf('/unprepared'));
    assert.deepEqual(prepared, [Buffer.from('café', 'utf8').toString('latin1')]);
  });

  test('only takes a set made by prepareHeaders(): a look-alike object is a TypeError, nothing injected', async () => {
    const res = await app.request('/forged');
    assert.equal(res.status, 500);
    assert.equal(res.headers.get('x-injected'), null);
    assert.match(await res.text(), /^TypeError: res.setHeaders\(\) takes a set made by prepareHeaders/);
  });
});

describe('the Content-Type a body implies: the default for its kind, or the one set before or after', () => {
  let srv: Running;
  const app = new App();
  app.get('/json', (req, res) => res.json({ a: 1 }));
  app.get('/text', (req, res) => res.send('hi'));
  app.get('/bytes', (req, res) => res.send(new Uint8Array([1, 2])));
  app.get('/typed-json', (req, res) => res.type('application/x-mine').json(1));
  app.get('/header-then-json', (req, res) => res.header('x-a', '1').json(1));
  app.get(
    '/json-then-type-in-hook',
    { hooks: { onSend: [(req, res) => void res.type('text/x-late').header('x-hook', 'yes')] } },
    (req, res) => res.json(1),
  );
  before(async () => {
    srv = await start(app);
  });
  after(() => srv.close());
  const get = (path: string) => rawRequest(srv.port, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);

  test('one Content-Type line, the default for the body, or the one set before or after in a hook', async () => {
    assert.deepEqual(lines(await get('/json'), 'content-type'), ['application/json; charset=utf-8']);
    assert.deepEqual(lines(await get('/text'), 'content-type'), ['text/plain; charset=utf-8']);
    assert.deepEqual(lines(await get('/bytes'), 'content-type'), ['application/octet-stream']);
    assert.deepEqual(lines(await get('/typed-json'), 'content-type'), ['application/x-mine']);
    const both = await get('/header-then-json');
    assert.deepEqual(lines(both, 'content-type'), ['application/json; charset=utf-8']);
    assert.deepEqual(lines(both, 'x-a'), ['1']);
    const late = await get('/json-then-type-in-hook');
    assert.deepEqual(lines(late, 'content-type'), ['text/x-late']);
    assert.deepEqual(lines(late, 'x-hook'), ['yes']);
    // The prepared line is copied: what the hook added is not in the next response.
    const again = await get('/json');
    assert.deepEqual(lines(again, 'content-type'), ['application/json; charset=utf-8']);
    assert.deepEqual(lines(again, 'x-hook'), []);
    assert.match(again, /\r\n\r\n\{"a":1\}$/);
  });
});

describe('res.header(): checked names, checked values, replace in place', () => {
  let srv: Running;
  const app = new App();
  app.get('/case', (req, res) =>
    res
      .header('X-Thing', 'a')
      .header('x-thing', 'b')
      .send(String(res.getHeader('X-THING'))),
  );
  app.get('/number', (req, res) => res.header('RateLimit-Remaining', 7).header('ratelimit-remaining', 6).send('x'));
  app.get('/array', (req, res) => res.header('link', ['</a>', '</b>']).send('x'));
  app.get('/replace-appended', (req, res) =>
    res.appendHeader('x-a', '1').appendHeader('x-b', 'kept').appendHeader('x-a', '2').header('x-a', '3').send('x'),
  );
  app.get('/remove', (req, res) =>
    res
      .header('x-a', '1')
      .removeHeader('X-A')
      .send(String(res.getHeader('x-a'))),
  );
  app.get(
    '/crlf',
    attempt((req, res) => res.header('x-a', 'ok\r\nset-cookie: stolen=1')),
  );
  app.get(
    '/crlf-common',
    attempt((req, res) => res.header('location', '/next\r\nset-cookie: stolen=1')),
  );
  app.get(
    '/crlf-array',
    attempt((req, res) => res.header('x-a', 'before').header('x-a', ['fine', 'bad\nx-b: 1'])),
  );
  app.get(
    '/bad-name',
    attempt((req, res) => res.header('x a', '1')),
  );
  app.get('/framing', (req, res) => res.header('content-length', '999').send('four'));
  before(async () => {
    srv = await start(app);
  });
  after(() => srv.close());

  test('names are case-insensitive: one line, the last value', async () => {
    const raw = await rawRequest(srv.port, 'GET /case HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.deepEqual(lines(raw, 'x-thing'), ['b']);
    assert.ok(raw.endsWith('\r\n\r\nb'));
  });

  test('numbers are sent as text', async () => {
    const res = await app.request('/number');
    assert.equal(res.headers.get('ratelimit-remaining'), '6');
  });

  test('an array sends one line per item', async () => {
    const raw = await rawRequest(srv.port, 'GET /array HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.deepEqual(lines(raw, 'link'), ['</a>', '</b>']);
  });

  test('replaces every appended line of the name, and only those', async () => {
    const raw = await rawRequest(srv.port, 'GET /replace-appended HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.deepEqual(lines(raw, 'x-a'), ['3']);
    assert.deepEqual(lines(raw, 'x-b'), ['kept']);
  });

  test('removeHeader() is case-insensitive', async () => {
    assert.equal(await (await app.request('/remove')).text(), 'undefined');
  });

  test('CR/LF in a value is refused for every name, common ones included (no response splitting)', async () => {
    for (const path of ['/crlf', '/crlf-common']) {
      const res = await app.request(path);
      assert.equal(res.status, 500);
      assert.equal(res.headers.get('set-cookie'), null);
      assert.match(await res.text(), /^TypeError: Header .* contains CR, LF or NUL/);
    }
  });

  test('a bad item in an array refuses the whole array and leaves the earlier value', async () => {
    let seen: string | undefined;
    const probe = new App();
    probe.get('/', (req, res) => {
      res.header('x-a', 'before');
      assert.throws(() => res.header('x-a', ['fine', 'bad\nx-b: 1']), /CR, LF or NUL/);
      seen = res.getHeader('x-a');
      res.send('x');
    });
    assert.equal((await probe.request('/')).headers.get('x-a'), 'before');
    assert.equal(seen, 'before');
    assert.equal((await app.request('/crlf-array')).status, 500);
  });

  test('a name that is not a token is a TypeError', async () => {
    assert.match(await (await app.request('/bad-name')).text(), /^TypeError: Invalid header name/);
  });

  test('Content-Length is the server’s: a header cannot corrupt the framing', async () => {
    const raw = await rawRequest(srv.port, 'GET /framing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.deepEqual(lines(raw, 'content-length'), ['4']);
  });
});

describe('req.header() and req.hasBody', () => {
  const app = new App();
  const read = (req: Request) => [req.header('x-custom'), req.header('X-Custom'), req.header('X-CUSTOM'), req.header('x-missing')];
  app.get('/sync', (req) => read(req));
  app.get('/async', async (req) => {
    await new Promise((r) => setTimeout(r, 5));
    return read(req);
  });
  app.post('/body', async (req) => {
    const before = req.hasBody;
    await new Promise((r) => setTimeout(r, 5));
    return { before, after: req.hasBody, text: await req.text() };
  });
  app.get('/nobody', (req) => ({ hasBody: req.hasBody }));

  test('case-insensitive, the same while the handler runs synchronously and after it awaited', async () => {
    for (const path of ['/sync', '/async']) {
      const res = await app.request(path, { headers: { 'X-Custom': 'v1' } });
      assert.deepEqual(await res.json(), ['v1', 'v1', 'v1', null]);
    }
  });

  test('hasBody: true with a body, false without or with Content-Length: 0', async () => {
    assert.deepEqual(await (await app.request('/body', { method: 'POST', body: 'abc' })).json(), {
      before: true,
      after: true,
      text: 'abc',
    });
    assert.deepEqual(await (await app.request('/body', { method: 'POST', body: '' })).json(), { before: false, after: false, text: '' });
    assert.deepEqual(await (await app.request('/nobody')).json(), { hasBody: false });
  });
});
