// The example plugin over real requests (app.request: the full uWS stack), as its users see it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { App } from '@tachyon/server';
import { apiKeyAuth, requireScope, type ApiKey } from '../index.ts';

const KEYS = { 'k-read': { name: 'reader', scopes: ['read'] }, 'k-write': { name: 'writer', scopes: ['read', 'write'] } };

async function appWith(options: Parameters<typeof apiKeyAuth>[0]) {
  const app = new App();
  await app.register(apiKeyAuth(options));
  app.get('/me', (req) => req.apiKey);
  app.get('/healthz', (req) => ({ ok: true, key: req.apiKey }));
  app.post('/things', { hooks: { preHandler: requireScope('write') } }, (req) => ({ by: req.apiKey!.name }));
  return app;
}

describe('api-key-auth', () => {
  test('a known key: req.apiKey is typed and set; a missing or unknown key: 401 with WWW-Authenticate', async () => {
    const app = await appWith({ keys: KEYS });
    const me = await app.request('/me', { headers: { 'x-api-key': 'k-read' } });
    assert.equal(me.status, 200);
    const key: ApiKey = await me.json();
    assert.deepEqual(key, KEYS['k-read']);
    const missing = await app.request('/me');
    assert.equal(missing.status, 401);
    assert.equal(missing.headers.get('www-authenticate'), 'ApiKey header="x-api-key"');
    assert.deepEqual(await missing.json(), { error: 'Missing API key (header x-api-key)' });
    assert.deepEqual(await (await app.request('/me', { headers: { 'x-api-key': 'nope' } })).json(), { error: 'Unknown API key' });
    await app.close();
  });

  test('public paths answer without a key (apiKey null); scopes are enforced per route', async () => {
    const app = await appWith({ keys: KEYS, public: ['/healthz'] });
    assert.deepEqual(await (await app.request('/healthz')).json(), { ok: true, key: null });
    assert.equal((await app.request('/things', { method: 'POST', headers: { 'x-api-key': 'k-read' } })).status, 403);
    assert.deepEqual(await (await app.request('/things', { method: 'POST', headers: { 'x-api-key': 'k-write' } })).json(), {
      by: 'writer',
    });
    await app.close();
  });

  test('an async lookup and a custom header', async () => {
    const app = await appWith({ header: 'Authorization', keys: async (k) => (k === 'Bearer t' ? { name: 'token', scopes: [] } : null) });
    assert.deepEqual(await (await app.request('/me', { headers: { authorization: 'Bearer t' } })).json(), { name: 'token', scopes: [] });
    assert.equal((await app.request('/me', { headers: { authorization: 'Bearer x' } })).status, 401);
    await app.close();
  });

  test('bad options fail at registration; registering it twice is an error', async () => {
    assert.throws(() => apiKeyAuth(null as never), /options must be an object/);
    assert.throws(() => apiKeyAuth({ keys: 'k' as never }), /keys must be an object of keys or a lookup function/);
    assert.throws(() => apiKeyAuth({ keys: KEYS, header: 'bad header' }), /header must be a valid header name/);
    const app = new App();
    await app.register(apiKeyAuth({ keys: KEYS }));
    assert.throws(() => app.register(apiKeyAuth({ keys: KEYS })), /plugin "api-key-auth" is registered twice/);
  });
});
