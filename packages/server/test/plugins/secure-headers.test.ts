import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { describe, test } from 'node:test';
import { App, secureHeaders, type AppOptions } from '../../src/index.ts';
import { selfSignedCert, start } from '../helpers.ts';

const DEFAULTS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'SAMEORIGIN',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'x-dns-prefetch-control': 'off',
  'x-permitted-cross-domain-policies': 'none',
  'origin-agent-cluster': '?1',
};

async function serve(options?: Parameters<typeof secureHeaders>[0], appOptions: AppOptions = {}) {
  const app = new App(appOptions);
  app.use(secureHeaders(options));
  app.get('/', () => 'ok');
  return start(app);
}

describe('secureHeaders', () => {
  test('defaults: the usual set, no HSTS on plain HTTP, no CSP, no COEP; also on 404s', async () => {
    const srv = await serve();
    try {
      for (const path of ['/', '/missing']) {
        const res = await fetch(srv.url + path);
        for (const [name, value] of Object.entries(DEFAULTS)) assert.equal(res.headers.get(name), value, `${path} ${name}`);
        assert.equal(res.headers.get('strict-transport-security'), null);
        assert.equal(res.headers.get('content-security-policy'), null);
        assert.equal(res.headers.get('cross-origin-embedder-policy'), null);
      }
    } finally {
      await srv.close();
    }
  });

  test('a handler overrides a header; headers set by earlier middleware are kept', async () => {
    const app = new App();
    app.use((req, res, next) => {
      res.header('x-early', '1');
      return next();
    });
    app.use(secureHeaders());
    app.get('/framed', (req, res) => {
      res.header('x-frame-options', 'DENY');
      return 'framed';
    });
    const srv = await start(app);
    try {
      const res = await fetch(srv.url + '/framed');
      assert.equal(res.headers.get('x-frame-options'), 'DENY');
      assert.equal(res.headers.get('x-early'), '1');
      assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
    } finally {
      await srv.close();
    }
  });

  test('each header: false drops it, a string replaces it, true keeps the default; CSP from directives', async () => {
    const srv = await serve({
      xFrameOptions: false,
      referrerPolicy: 'strict-origin-when-cross-origin',
      originAgentCluster: true,
      crossOriginEmbedderPolicy: true,
      contentSecurityPolicy: {
        directives: {
          defaultSrc: ["'self'"],
          'img-src': ["'self'", 'data:'],
          scriptSrc: "'self'",
          upgradeInsecureRequests: true,
          objectSrc: false,
        },
      },
    });
    try {
      const res = await fetch(srv.url + '/');
      assert.equal(res.headers.get('x-frame-options'), null);
      assert.equal(res.headers.get('referrer-policy'), 'strict-origin-when-cross-origin');
      assert.equal(res.headers.get('origin-agent-cluster'), '?1');
      assert.equal(res.headers.get('cross-origin-embedder-policy'), 'require-corp');
      assert.equal(
        res.headers.get('content-security-policy'),
        "default-src 'self'; img-src 'self' data:; script-src 'self'; upgrade-insecure-requests",
      );
    } finally {
      await srv.close();
    }
    const report = await serve({ contentSecurityPolicy: { directives: { defaultSrc: ["'none'"] }, reportOnly: true } });
    try {
      const res = await fetch(report.url + '/');
      assert.equal(res.headers.get('content-security-policy'), null);
      assert.equal(res.headers.get('content-security-policy-report-only'), "default-src 'none'");
    } finally {
      await report.close();
    }
  });

  test('HSTS when the request came over TLS as a trusted proxy says (X-Forwarded-Proto), not when spoofed', async () => {
    const trusted = await serve({ strictTransportSecurity: 'max-age=63072000; includeSubDomains; preload' }, { trustProxy: true });
    const untrusted = await serve();
    try {
      const viaProxy = await fetch(trusted.url + '/', { headers: { 'x-forwarded-proto': 'https' } });
      assert.equal(viaProxy.headers.get('strict-transport-security'), 'max-age=63072000; includeSubDomains; preload');
      assert.equal(viaProxy.headers.get('x-content-type-options'), 'nosniff');
      assert.equal((await fetch(trusted.url + '/')).headers.get('strict-transport-security'), null);
      const spoofed = await fetch(untrusted.url + '/', { headers: { 'x-forwarded-proto': 'https' } });
      assert.equal(spoofed.headers.get('strict-transport-security'), null);
    } finally {
      await trusted.close();
      await untrusted.close();
    }
  });

  test('HSTS over a real TLS connection (default value), and not when disabled', async () => {
    const { key, cert } = selfSignedCert();
    const tls = { key, cert };
    const get = (port: number) =>
      new Promise<Record<string, string | string[] | undefined>>((resolve, reject) => {
        const req = httpsRequest({ host: '127.0.0.1', port, path: '/', ca: tls.cert, agent: false }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.headers));
        });
        req.on('error', reject);
        req.end();
      });
    const on = await serve(undefined, { tls });
    const off = await serve({ strictTransportSecurity: false }, { tls });
    try {
      const headers = await get(on.port);
      assert.equal(headers['strict-transport-security'], 'max-age=15552000; includeSubDomains');
      assert.equal(headers['x-frame-options'], 'SAMEORIGIN');
      assert.equal((await get(off.port))['strict-transport-security'], undefined);
    } finally {
      await on.close();
      await off.close();
    }
  });

  test('bad options throw TypeErrors at setup', () => {
    assert.throws(() => secureHeaders({ xFrameOptions: 'DENY\r\nSet-Cookie: x=1' }), /xFrameOptions must be/);
    assert.throws(() => secureHeaders({ referrerPolicy: '' }), /referrerPolicy must be/);
    assert.throws(() => secureHeaders({ referrerPolicy: 3 as never }), /referrerPolicy must be/);
    assert.throws(() => secureHeaders({ xFrameOption: 'DENY' } as never), /unknown option "xFrameOption"/);
    assert.throws(() => secureHeaders({ contentSecurityPolicy: {} as never }), /directives/);
    assert.throws(() => secureHeaders({ contentSecurityPolicy: { directives: {} } }), /empty/);
    assert.throws(
      () => secureHeaders({ contentSecurityPolicy: { directives: { defaultSrc: ["'self'; script-src *"] } } }),
      /invalid source/,
    );
    assert.throws(
      () => secureHeaders({ contentSecurityPolicy: { directives: { 'default src': ["'self'"] } } }),
      /invalid CSP directive name/,
    );
    assert.throws(() => secureHeaders({ contentSecurityPolicy: { directives: { defaultSrc: 5 as never } } }), /must be a string, a list/);
    assert.throws(() => secureHeaders(null as never), /options must be an object/);
  });
});
