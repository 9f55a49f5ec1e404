// Cookie options built from user input must not inject attributes into Set-Cookie.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { App, serializeCookie } from '../../src/index.ts';
import { start } from '../helpers.ts';

test('every cookie option is validated: no attribute injection', () => {
  const evil = 'low; Domain=evil.example';
  assert.throws(() => serializeCookie('a', 'b', { priority: evil as never }), /Invalid cookie priority/);
  assert.throws(() => serializeCookie('a', 'b', { sameSite: 'lax; Domain=evil.example' as never }), /Invalid cookie sameSite/);
  assert.throws(() => serializeCookie('a', 'b', { sameSite: 'constructor' as never }), /Invalid cookie sameSite/);
  assert.throws(() => serializeCookie('a', 'b', { path: '/; Domain=evil.example' }), /Invalid cookie path/);
  assert.throws(() => serializeCookie('a', 'b', { domain: 'x.example\r\nX: y' }), /Invalid cookie domain/);
  assert.throws(() => serializeCookie('a', 'b', { maxAge: '60; Domain=evil' as never }), /maxAge/);
  assert.throws(() => serializeCookie('a', 'b', { expires: 'Thu, 01 Jan 1970; Domain=evil' as never }), /expires/);
  assert.throws(() => serializeCookie('a', 'b', { expires: new Date(NaN) }), /expires/);
  assert.throws(() => serializeCookie('a', 'b', { httpOnly: 'yes' as never }), /httpOnly must be a boolean/);
  assert.equal(
    serializeCookie('a', 'b', { priority: 'High' as never, sameSite: 'Strict', maxAge: 60, path: '/', httpOnly: true }),
    'a=b; Max-Age=60; Path=/; HttpOnly; Priority=High; SameSite=Strict',
  );
});

test('res.cookie with an injected option answers 500 and sends no cookie', async () => {
  const app = new App();
  app.get('/c', (req, res) => {
    res.cookie('session', 'x', { priority: String(req.query.p) as never });
    return 'set';
  });
  const running = await start(app);
  try {
    const bad = await fetch(`${running.url}/c?p=${encodeURIComponent('low; Domain=evil.example')}`);
    assert.equal(bad.status, 500);
    assert.equal(bad.headers.get('set-cookie'), null);
    const good = await fetch(`${running.url}/c?p=low`);
    assert.equal(good.headers.get('set-cookie'), 'session=x; Path=/; Priority=Low');
  } finally {
    await running.close();
  }
});
