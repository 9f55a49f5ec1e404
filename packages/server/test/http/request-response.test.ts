import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { App, parseCookies, serializeCookie, signCookieValue, unsignCookieValue } from '../../src/index.ts';
import { resolveClientIp } from '../../src/http/io/request.ts';
import { rawRequest, sleep, start, statusOf, type Running } from '../helpers.ts';

describe('cookies (unit)', () => {
  test('parse: quoted values, percent-decoding, first name wins, garbage tolerated', () => {
    const c = parseCookies('a=1; b="quoted"; c=caf%C3%A9; a=2; bad; d=%E0%A4%A; =x');
    assert.deepEqual({ ...c }, { a: '1', b: 'quoted', c: 'café', d: '%E0%A4%A' });
    // No Object.prototype in the chain: inherited names are not cookies, __proto__ is a plain key.
    assert.equal('toString' in c, false);
    assert.equal(Object.getPrototypeOf(Object.getPrototypeOf(c)), null);
    const evil = parseCookies('__proto__=x; constructor=y');
    // biome-ignore lint/suspicious/noProto: the test is that a `__proto__` cookie is a plain own key
    assert.equal(evil.__proto__, 'x');
    assert.equal(evil.constructor, 'y');
  });
  test('serialize: attributes, encoding, and refusal of injection', () => {
    assert.equal(
      serializeCookie('sid', 'a b;c', { httpOnly: true, secure: true, sameSite: 'lax', maxAge: 60, path: '/' }),
      'sid=a%20b%3Bc; Max-Age=60; Path=/; HttpOnly; Secure; SameSite=Lax',
    );
    assert.throws(() => serializeCookie('bad name', 'x'), /Invalid cookie name/);
    assert.throws(() => serializeCookie('a', 'x', { path: '/;evil' }), /Invalid cookie path/);
    assert.throws(() => serializeCookie('a', 'x', { domain: 'x\r\nSet-Cookie: y=1' }), /Invalid cookie domain/);
  });
  test('signing: rotation verifies old secrets, tampering fails', () => {
    const signed = signCookieValue('user42', 'old');
    assert.equal(unsignCookieValue(signed, ['new', 'old']), 'user42');
    assert.equal(unsignCookieValue(signed, ['new']), undefined);
    assert.equal(unsignCookieValue(signed.replace('user42', 'user43'), ['old']), undefined);
    assert.equal(unsignCookieValue(signed.slice(0, -2), ['old']), undefined);
    assert.equal(unsignCookieValue('nodot', ['old']), undefined);
    // Fuzz finding (fuzz/targets/cookies.mjs): an empty value signed to ".<mac>" never verified.
    assert.equal(unsignCookieValue(signCookieValue('', 'old'), ['old']), '');
    assert.equal(unsignCookieValue(signCookieValue('', 'other'), ['old']), undefined);
    assert.equal(unsignCookieValue('.', ['old']), undefined);
  });
});

describe('client address', () => {
  test('trustProxy: false, true, hop count, predicate', () => {
    assert.equal(resolveClientIp('10.0.0.1', '1.1.1.1, 2.2.2.2', false), '10.0.0.1');
    assert.equal(resolveClientIp('10.0.0.1', '1.1.1.1, 2.2.2.2', true), '1.1.1.1');
    assert.equal(resolveClientIp('10.0.0.1', '1.1.1.1, 2.2.2.2', 1), '2.2.2.2');
    assert.equal(resolveClientIp('10.0.0.1', '1.1.1.1, 2.2.2.2', 5), '1.1.1.1');
    assert.equal(
      resolveClientIp('10.0.0.1', '1.1.1.1, 2.2.2.2', (a) => a.startsWith('10.') || a === '2.2.2.2'),
      '1.1.1.1',
    );
    assert.equal(resolveClientIp('10.0.0.1', undefined, true), '10.0.0.1');
  });
});

describe('request and response over the wire', () => {
  let srv: Running;
  before(async () => {
    const app = new App({ cookieSecret: ['new-secret', 'old-secret'], trustProxy: 1 });
    app.get('/info', (req) => ({
      method: req.method,
      path: req.path,
      url: req.url,
      query: { ...req.query },
      ua: req.header('User-Agent'),
      multi: req.headers['x-multi'],
      ip: req.ip,
      remote: req.remoteAddress,
      protocol: req.protocol,
    }));
    app.get('/info-async', async (req) => {
      await sleep(5); // the uWS request is gone by now: everything must come from the snapshot
      return {
        path: req.path,
        url: req.url,
        a: req.query.a,
        h: req.header('x-h'),
        all: req.headers['x-h'],
        cookie: req.cookies.c,
        ip: req.ip,
      };
    });
    // A request with a body has its headers copied on arrival (the framing guard's list).
    app.post('/headers-of-body', async (req) => {
      const sync = { multi: req.header('X-Multi'), cookie: req.header('cookie'), none: req.header('x-none') ?? null };
      const text = await req.text();
      return { sync, text, multi: req.header('x-multi'), all: { ...req.headers }, cookies: { ...req.cookies } };
    });
    app.get('/set-cookies', (req, res) => {
      res.cookie('plain', 'v 1', { httpOnly: true });
      res.cookie('session', 'user42', { signed: true, sameSite: 'strict' });
      res.clearCookie('old');
      res.end();
    });
    app.get('/read-signed', (req) => ({ signed: { ...req.signedCookies }, raw: req.cookies.session ?? null }));
    app.get('/crlf', (req, res) => {
      res.header('x-evil', 'a\r\nSet-Cookie: pwned=1');
      res.end('unreachable');
    });
    app.get('/headers', (req, res) => {
      res.status(201).header('x-a', '1').header('X-A', '2').appendHeader('x-b', '1').appendHeader('x-b', '2').header('x-list', ['p', 'q']);
      res.header('content-length', '999'); // ignored: uWS frames the body itself
      res.send('body');
    });
    app.get('/redirect', (req, res) => res.redirect('/elsewhere', 301));
    app.get('/no-content', (req, res) => res.status(204).end());
    app.get('/double-end', (req, res) => {
      res.end('one');
      res.end('two');
      res.status(500).header('x-late', '1').json({ late: true });
    });
    srv = await start(app);
  });
  after(() => srv.close());

  test('method, path, url, query, headers, ip (behind one trusted proxy)', async () => {
    const r = await fetch(srv.url + '/info?a=1&a=2&b=x%20y', {
      headers: { 'user-agent': 'tester', 'x-forwarded-for': '9.9.9.9, 8.8.8.8', 'x-forwarded-proto': 'https' },
    });
    const body = await r.json();
    assert.deepEqual(body.query, { a: ['1', '2'], b: 'x y' });
    assert.equal(body.method, 'GET');
    assert.equal(body.path, '/info');
    assert.equal(body.url, '/info?a=1&a=2&b=x%20y');
    assert.equal(body.ua, 'tester');
    assert.equal(body.ip, '8.8.8.8');
    assert.equal(body.remote, '127.0.0.1');
    assert.equal(body.protocol, 'https');
  });

  test('repeated request headers are joined', async () => {
    const raw = await rawRequest(srv.port, 'GET /info HTTP/1.1\r\nHost: x\r\nX-Multi: a\r\nX-Multi: b\r\n\r\n', { until: /\}$/ });
    assert.match(raw, /"multi":"a, b"/);
  });

  test('a request with a body: repeated headers joined (cookies with "; "), the same before and after an await', async () => {
    const raw = await rawRequest(
      srv.port,
      'POST /headers-of-body HTTP/1.1\r\nHost: x\r\nX-Multi: a\r\nCookie: c=1\r\nX-Multi: b\r\nCookie: d=2\r\nContent-Length: 2\r\n\r\nhi',
      { until: /\}\}$/ },
    );
    assert.equal(statusOf(raw), 200);
    const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
    assert.deepEqual(body.sync, { multi: 'a, b', cookie: 'c=1; d=2', none: null });
    assert.equal(body.text, 'hi');
    assert.equal(body.multi, 'a, b');
    assert.deepEqual(body.all, { host: 'x', 'x-multi': 'a, b', cookie: 'c=1; d=2', 'content-length': '2' });
    assert.deepEqual(body.cookies, { c: '1', d: '2' });
  });

  test('after an await, the request still has its path, query, headers and cookies', async () => {
    const r = await fetch(srv.url + '/info-async?a=5', { headers: { 'x-h': 'kept', cookie: 'c=yum' } });
    assert.deepEqual(await r.json(), {
      path: '/info-async',
      url: '/info-async?a=5',
      a: '5',
      h: 'kept',
      all: 'kept',
      cookie: 'yum',
      ip: '127.0.0.1',
    });
  });

  test('invalid percent-encoding in the query → 400', async () => {
    const raw = await rawRequest(srv.port, 'GET /info?a=%zz HTTP/1.1\r\nHost: x\r\n\r\n', { until: /\}$/ });
    assert.equal(statusOf(raw), 400);
  });

  test('cookies are set, signed with the first secret, and read back; tampered ones read as absent', async () => {
    const r = await fetch(srv.url + '/set-cookies');
    const set = r.headers.getSetCookie();
    assert.equal(set.length, 3);
    assert.match(set[0]!, /^plain=v%201; Path=\/; HttpOnly$/);
    assert.match(set[1]!, /^session=user42\.[\w-]+; Path=\/; SameSite=Strict$/);
    assert.match(set[2]!, /^old=; Max-Age=0; Path=\/; Expires=Thu, 01 Jan 1970/);
    const session = set[1]!.split(';')[0]!;
    const good = await (await fetch(srv.url + '/read-signed', { headers: { cookie: session } })).json();
    assert.deepEqual(good.signed, { session: 'user42' });
    const tampered = session.replace('user42', 'admin1');
    const bad = await (await fetch(srv.url + '/read-signed', { headers: { cookie: tampered } })).json();
    assert.deepEqual(bad.signed, {});
    assert.equal(bad.raw, tampered.split('=')[1]);
    // A cookie signed with the old secret still verifies (rotation).
    const old = `session=${signCookieValue('user7', 'old-secret')}`;
    assert.deepEqual((await (await fetch(srv.url + '/read-signed', { headers: { cookie: old } })).json()).signed, { session: 'user7' });
  });

  test('a header value with CR/LF throws → 500, never reaches the wire', async () => {
    const raw = await rawRequest(srv.port, 'GET /crlf HTTP/1.1\r\nHost: x\r\n\r\n', { until: /\}$/ });
    assert.equal(statusOf(raw), 500);
    assert.ok(!raw.includes('pwned'));
  });

  test('status and headers in any order; replace vs append; content-length is ours', async () => {
    const r = await fetch(srv.url + '/headers');
    assert.equal(r.status, 201);
    assert.equal(r.headers.get('x-a'), '2');
    assert.equal(r.headers.get('x-b'), '1, 2');
    assert.equal(r.headers.get('x-list'), 'p, q');
    assert.equal(r.headers.get('content-length'), '4');
    assert.equal(await r.text(), 'body');
  });

  test('redirect, 204', async () => {
    const r = await fetch(srv.url + '/redirect', { redirect: 'manual' });
    assert.equal(r.status, 301);
    assert.equal(r.headers.get('location'), '/elsewhere');
    const raw = await rawRequest(srv.port, 'GET /no-content HTTP/1.1\r\nHost: x\r\n\r\n', { until: /\r\n\r\n/, timeout: 300 });
    assert.equal(statusOf(raw), 204);
  });

  test('writes after end are harmless no-ops', async () => {
    const r = await fetch(srv.url + '/double-end');
    assert.equal(r.status, 200);
    assert.equal(await r.text(), 'one');
    assert.equal(r.headers.get('x-late'), null);
  });

  test('a request head over the limit → 431 from uWS, server keeps serving', async () => {
    const raw = await rawRequest(srv.port, `GET /info HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40 * 1024)}\r\n\r\n`, { until: /431/ });
    assert.equal(statusOf(raw), 431);
    assert.equal((await fetch(srv.url + '/info')).status, 200);
  });

  test('garbage on the socket does not crash the server', async () => {
    await rawRequest(srv.port, 'NOT HTTP AT ALL\r\n\r\n\x00\x01\x02', { timeout: 300 });
    await rawRequest(srv.port, 'GET /info HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n', { timeout: 300 });
    assert.equal((await fetch(srv.url + '/info')).status, 200);
  });
});
