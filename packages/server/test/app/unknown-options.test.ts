// Every options object refuses keys it does not declare, when it is declared, naming the key
// and the closest known one ("did you mean …") or, when none is close, the known keys.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { z } from 'zod';
import {
  App,
  checkKnownKeys,
  cluster,
  cors,
  createStatic,
  health,
  metrics,
  rateLimit,
  secureHeaders,
  silentLogger,
} from '../../src/index.ts';

const app = () => new App({ logger: silentLogger });
const noop = () => {};

describe('checkKnownKeys', () => {
  test('suggests the closest key (edit distance ≤ 2, or another case), else lists the known keys', () => {
    assert.throws(() => checkKnownKeys('x()', { shema: 1 }, ['schema', 'handler']), {
      name: 'TypeError',
      message: 'x(): unknown option "shema" (did you mean "schema"?)',
    });
    assert.throws(() => checkKnownKeys('x()', { MAXAGE: 1 }, new Set(['maxAge'])), {
      message: 'x(): unknown option "MAXAGE" (did you mean "maxAge"?)',
    });
    assert.throws(() => checkKnownKeys('x()', { data: 1 }, ['schema', 'handler']), {
      message: 'x(): unknown option "data" (known: schema, handler)',
    });
    // A one-letter key is not "close" to another one-letter key: every key would be.
    assert.throws(() => checkKnownKeys('x()', { a: 1 }, ['b']), { message: 'x(): unknown option "a" (known: b)' });
    assert.throws(() => checkKnownKeys('x()', { a: 1 }, []), { message: 'x(): unknown option "a" (it takes no options)' });
    checkKnownKeys('x()', { schema: 1, handler: 2 }, ['schema', 'handler']);
    checkKnownKeys('x()', {}, []);
  });
});

describe('unknown options, one object at a time', () => {
  test('new App()', () => {
    assert.throws(() => new App({ bodylimit: 1 } as never), {
      message: 'new App(): unknown option "bodylimit" (did you mean "bodyLimit"?)',
    });
    assert.throws(() => new App({ loger: silentLogger } as never), /new App\(\): unknown option "loger" \(did you mean "logger"\?\)/);
    assert.throws(() => new App({ presence: { heartbeet: 100 } } as never), {
      message: 'new App(): presence: unknown option "heartbeet" (did you mean "heartbeat"?)',
    });
  });

  test('tls (app and cluster) and its sni identities', async () => {
    assert.throws(() => new App({ tls: { key: 'k', cert: 'c', passphrse: 'p' } } as never), {
      message: 'new App(): tls: unknown option "passphrse" (did you mean "passphrase"?)',
    });
    assert.throws(() => new App({ tls: { key: 'k', cert: 'c', sni: { 'a.example': { key: 'k', certs: 'c' } } } } as never), {
      message: 'new App(): tls.sni["a.example"]: unknown option "certs" (did you mean "cert"?)',
    });
    await assert.rejects(
      cluster({ tls: { keyFile: 'k', cert: 'c' } } as never, () => app()),
      /^TypeError: cluster\(\): tls: unknown option "keyFile" \(known: key, cert, passphrase, ca, sni\)$/,
    );
  });

  test('compression (app and route)', () => {
    assert.throws(() => new App({ compression: { treshold: 10 } } as never), {
      message: 'compression: unknown option "treshold" (did you mean "threshold"?)',
    });
    assert.throws(
      () => app().get('/', { compress: { gzipLvl: 1 } } as never, noop),
      /compression: unknown option "gzipLvl" \(did you mean "gzipLevel"\?\)/,
    );
  });

  test('listen()', async () => {
    await assert.rejects(app().listen({ port: 0, hots: '127.0.0.1' } as never), {
      message: 'listen(): unknown option "hots" (did you mean "host"?)',
    });
    await assert.rejects(app().listen(0, { signal: true } as never), /listen\(\): unknown option "signal" \(did you mean "signals"\?\)/);
  });

  test('routes (GET, ANY) name the method and the pattern', () => {
    assert.throws(() => app().get('/users/:id', { parms: z.object({}) } as never, noop), {
      message: 'Route GET /users/:id: unknown option "parms" (did you mean "params"?)',
    });
    assert.throws(
      () => app().any('/x', { schema: z.object({}) } as never, noop),
      /^TypeError: Route ANY \/x: unknown option "schema" \(known: params, query, body, headers, cookies, bodyLimit, consumes, timeout, compress, dedup, hooks, response, serialize, summary, description, tags, deprecated, operationId, security, hide\)$/,
    );
    assert.throws(
      () => app().post('/x', { timout: 5 } as never, noop),
      /Route POST \/x: unknown option "timout" \(did you mean "timeout"\?\)/,
    );
  });

  test('ws routes and their events: `data:` for `schema:` is refused, so unvalidated data never reaches the handler', () => {
    assert.throws(() => app().ws('/chat', { idletimeout: 10 } as never), {
      message: 'ws /chat: unknown option "idletimeout" (did you mean "idleTimeout"?)',
    });
    assert.throws(() => app().ws('/chat', { events: { send: { data: z.object({}), handler: noop } } } as never), {
      message: 'ws /chat: event send: unknown option "data" (known: schema, reply, binary, handler)',
    });
    assert.throws(() => app().ws('/chat', { events: { send: { shema: z.object({}), handler: noop } } } as never), {
      message: 'ws /chat: event send: unknown option "shema" (did you mean "schema"?)',
    });
    assert.throws(
      () => app().ws('/chat', { events: { send: noop } } as never),
      /ws \/chat: event send must be \{ handler \} \(or \{ schema, handler \}\), not a bare function/,
    );
    assert.throws(() => app().ws('/chat', { events: { send: null } } as never), /ws \/chat: event send must be an object/);
    assert.throws(() => app().ws('/chat', { events: 'send' } as never), /ws \/chat: events must be an object/);
    // Declared keys pass, `hooks` included (lifecycle hooks per route).
    app().ws('/ok', { events: { send: { schema: z.object({}), handler: noop } }, hooks: undefined } as never);
  });

  test('ws rateLimit and rateLimit.upgrades', () => {
    assert.throws(() => app().ws('/a', { rateLimit: { messagesPerSecnd: 1 } } as never), {
      message: 'ws /a: rateLimit: unknown option "messagesPerSecnd" (did you mean "messagesPerSecond"?)',
    });
    assert.throws(() => app().ws('/a', { rateLimit: { upgrades: { window: 1000, max: 1, stor: null } } } as never), {
      message: 'ws /a: rateLimit.upgrades: unknown option "stor" (did you mean "store"?)',
    });
  });

  test('topics, history and presence', () => {
    assert.throws(() => app().topic('room:*', { histroy: { size: 10 } } as never), {
      message: 'topic room:*: unknown option "histroy" (did you mean "history"?)',
    });
    assert.throws(() => app().topic('room:*', { history: { size: 10, tll: 5 } } as never), {
      message: 'topic room:*: history: unknown option "tll" (did you mean "ttl"?)',
    });
    assert.throws(() => app().topic('room:*', { presence: { event: true } } as never), {
      message: 'topic room:*: presence: unknown option "event" (did you mean "events"?)',
    });
  });

  test('static (createStatic, and app.static at its declaration)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tachyon-opts-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'a.txt'), 'a');
    await assert.rejects(createStatic(dir, { maxage: 10 } as never), {
      message: 'static: unknown option "maxage" (did you mean "maxAge"?)',
    });
    assert.throws(() => app().static('/', dir, { dotFiles: 'allow' } as never), {
      message: 'static: unknown option "dotFiles" (did you mean "dotfiles"?)',
    });
  });

  test('the plugins: cors, secureHeaders, rateLimit, health, metrics', () => {
    assert.throws(() => cors({ orgin: '*' } as never), { message: 'cors(): unknown option "orgin" (did you mean "origin"?)' });
    assert.throws(() => secureHeaders({ xFrameOption: 'DENY' } as never), {
      message: 'secureHeaders(): unknown option "xFrameOption" (did you mean "xFrameOptions"?)',
    });
    assert.throws(() => secureHeaders({ contentSecurityPolicy: { directives: {}, reportonly: true } } as never), {
      message: 'secureHeaders(): contentSecurityPolicy: unknown option "reportonly" (did you mean "reportOnly"?)',
    });
    assert.throws(() => rateLimit({ window: 1000, max: 1, keys: noop } as never), {
      message: 'rateLimit(): unknown option "keys" (did you mean "key"?)',
    });
    assert.throws(() => health({ check: {} } as never), { message: 'health(): unknown option "check" (did you mean "checks"?)' });
    assert.throws(() => metrics({ pth: '/m' } as never), { message: 'metrics(): unknown option "pth" (did you mean "path"?)' });
  });

  test('requestId and accessLog', () => {
    assert.throws(() => new App({ requestId: { headr: 'x-id' } } as never), {
      message: 'requestId: unknown option "headr" (did you mean "header"?)',
    });
    assert.throws(() => new App({ accessLog: { levle: 'info' } } as never), {
      message: 'accessLog: unknown option "levle" (did you mean "level"?)',
    });
  });

  test('cluster()', async () => {
    await assert.rejects(
      cluster({ worker: 2 } as never, () => app()),
      { message: 'cluster(): unknown option "worker" (did you mean "workers"?)' },
    );
  });
});
