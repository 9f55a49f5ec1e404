// Request ids and access logs through pino (the documented logger), writing to a stream the
// test reads: real requests over real sockets, the lines pino actually wrote.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { App, HttpError, jsonLogger } from '../../src/index.ts';
import { eventually, rawRequest, recordingLogger, sleep, start } from '../helpers.ts';

/** A pino logger whose lines land in `lines`, parsed. */
function pinoLines(level = 'debug') {
  const lines: Record<string, any>[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
      cb();
    },
  });
  return { lines, logger: pino({ level }, stream) };
}

describe('request ids', () => {
  test('requestId: true: every response carries X-Request-Id = req.id, unique; req.log lines and framework error lines carry reqId', async () => {
    const { lines, logger } = pinoLines();
    const app = new App({ logger, requestId: true });
    app.get('/hi', (req) => {
      req.log.info({ step: 'handler' }, 'hello from the handler');
      return { id: req.id };
    });
    app.get('/boom', () => {
      throw new Error('kaput');
    });
    const srv = await start(app);
    try {
      const ids = new Set<string>();
      for (let i = 0; i < 5; i++) {
        const res = await fetch(srv.url + '/hi');
        const id = res.headers.get('x-request-id');
        assert.ok(id && /^[\w-]+-[0-9a-z]+$/.test(id), `generated id: ${id}`);
        assert.deepEqual(await res.json(), { id });
        ids.add(id);
      }
      assert.equal(ids.size, 5);
      const handlerLines = lines.filter((l) => l.msg === 'hello from the handler');
      assert.equal(handlerLines.length, 5);
      assert.deepEqual(new Set(handlerLines.map((l) => l.reqId)), ids, 'each handler line carries its request id');

      const boom = await fetch(srv.url + '/boom');
      assert.equal(boom.status, 500);
      const failed = lines.find((l) => l.msg === 'request failed');
      assert.equal(failed?.reqId, boom.headers.get('x-request-id'), 'the framework logs through the request logger');
      assert.equal(failed?.err?.message, 'kaput');
      assert.equal(failed?.route, '/boom');
      // 404s (no route) get an id too.
      assert.ok((await fetch(srv.url + '/nothing')).headers.get('x-request-id'));
    } finally {
      await srv.close();
    }
  });

  test('the incoming X-Request-Id is used only when trusted (trustProxy, or trustHeader) and well-formed', async () => {
    const echo = (app: App) => app.get('/', (req) => req.id);
    const untrusted = new App({ requestId: true });
    echo(untrusted);
    const proxied = new App({ requestId: true, trustProxy: 1 });
    echo(proxied);
    const explicit = new App({ requestId: { trustHeader: true, header: 'X-Trace' } });
    echo(explicit);
    const distrust = new App({ requestId: { trustHeader: false }, trustProxy: true });
    echo(distrust);
    const servers = await Promise.all([untrusted, proxied, explicit, distrust].map(start));
    try {
      const [u, p, e, d] = servers.map((s) => s!.url);
      const get = (url: string, headers: Record<string, string>) => fetch(url + '/', { headers });
      let res = await get(u!, { 'x-request-id': 'from-client' });
      assert.notEqual(await res.text(), 'from-client', 'untrusted by default');
      res = await get(p!, { 'x-request-id': 'from-proxy-1' });
      assert.equal(await res.text(), 'from-proxy-1');
      assert.equal(res.headers.get('x-request-id'), 'from-proxy-1');
      res = await get(e!, { 'x-trace': 'abc.def' });
      assert.equal(await res.text(), 'abc.def');
      assert.equal(res.headers.get('x-trace'), 'abc.def', 'the configured header name is the one sent back');
      assert.equal(res.headers.get('x-request-id'), null);
      res = await get(d!, { 'x-request-id': 'nope' });
      assert.notEqual(await res.text(), 'nope', 'trustHeader: false overrides trustProxy');
      // Malformed ids (spaces, too long, control characters) are replaced by generated ones.
      for (const bad of ['has space', 'x'.repeat(201)]) {
        res = await get(p!, { 'x-request-id': bad });
        const id = await res.text();
        assert.notEqual(id, bad);
        assert.match(id, /^[\w-]+-[0-9a-z]+$/);
      }
    } finally {
      await Promise.all(servers.map((s) => s!.close()));
    }
  });

  test('off (the default): no header, no id made unless req.id or req.log is read; a custom generator', async () => {
    const app = new App();
    app.get('/plain', () => 'x');
    app.get('/lazy', (req) => req.id);
    const custom = new App({ requestId: { generate: () => `req-${Math.random().toString(16).slice(2)}` } });
    custom.get('/', (req) => req.id);
    const a = await start(app);
    const b = await start(custom);
    try {
      const plain = await fetch(a.url + '/plain');
      assert.equal(plain.headers.get('x-request-id'), null);
      const lazy = await fetch(a.url + '/lazy');
      assert.match(await lazy.text(), /^[\w-]+-[0-9a-z]+$/);
      assert.equal(lazy.headers.get('x-request-id'), null);
      const res = await fetch(b.url + '/');
      const id = await res.text();
      assert.match(id, /^req-[0-9a-f]+$/);
      assert.equal(res.headers.get('x-request-id'), id);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('a generator returning a bad id fails the request with 500 and says why', async () => {
    const { entries, logger } = recordingLogger();
    const app = new App({ logger, requestId: { generate: () => 'has spaces' } });
    app.get('/', () => 'x');
    const srv = await start(app);
    try {
      assert.equal((await fetch(srv.url + '/')).status, 500);
      assert.ok(entries.some((e) => /generate\(\) must return/.test(String((e.obj as { err?: Error }).err?.message))));
    } finally {
      await srv.close();
    }
  });

  test('loggers without child(): lines get reqId added; jsonLogger has child()', async () => {
    const { entries, logger } = recordingLogger();
    const app = new App({ logger, requestId: true });
    app.get('/', (req) => {
      req.log.info({ a: 1 }, 'obj');
      req.log.warn('text only');
      return req.id;
    });
    const srv = await start(app);
    try {
      const id = await (await fetch(srv.url + '/')).text();
      assert.deepEqual(entries.find((e) => e.msg === 'obj')?.obj, { reqId: id, a: 1 });
      assert.deepEqual(entries.find((e) => e.msg === 'text only')?.obj, { reqId: id });
    } finally {
      await srv.close();
    }
    assert.equal(typeof jsonLogger().child, 'function');
  });

  test('options are checked', () => {
    assert.throws(() => new App({ requestId: 'yes' as never }), /requestId must be/);
    assert.throws(() => new App({ requestId: { header: 'bad header' } }), /requestId.header/);
    assert.throws(() => new App({ requestId: { generate: 'x' as never } }), /requestId.generate/);
    assert.throws(() => new App({ requestId: { nope: 1 } as never }), /unknown option "nope"/);
    assert.throws(() => new App({ accessLog: { level: 'trace' as never } }), /accessLog.level/);
    assert.throws(() => new App({ accessLog: { skip: 1 as never } }), /accessLog.skip/);
    assert.throws(() => new App({ logger: { info() {} } as never }), /logger must have/);
  });
});

describe('access logs', () => {
  test('one line per request: method, path, route, status, bytes, duration, reqId; HEAD, 404, streams', async () => {
    const { lines, logger } = pinoLines('info');
    const app = new App({ logger, requestId: true, accessLog: true });
    app.get('/users/:id', (req) => ({ id: req.params.id }));
    app.get('/stream', async (req, res) => {
      await res.stream(
        (async function* () {
          yield 'abc';
          yield 'defgh';
        })(),
      );
    });
    app.get('/slow', async () => {
      await sleep(30);
      return 'late';
    });
    const srv = await start(app);
    try {
      const res = await fetch(srv.url + '/users/7?secret=1');
      const body = await res.text();
      await fetch(srv.url + '/users/7', { method: 'HEAD' });
      await (await fetch(srv.url + '/missing')).text();
      await (await fetch(srv.url + '/stream')).text();
      await (await fetch(srv.url + '/slow')).text();
      await eventually(() => lines.filter((l) => l.msg === 'request completed').length === 5);
      const access = lines.filter((l) => l.msg === 'request completed');
      const [get, head, missing, stream, slow] = access;
      assert.equal(get!.method, 'GET');
      assert.equal(get!.path, '/users/7', 'the path, without the query string');
      assert.equal(get!.route, '/users/:id');
      assert.equal(get!.status, 200);
      assert.equal(get!.bytes, Buffer.byteLength(body));
      assert.equal(get!.reqId, res.headers.get('x-request-id'));
      assert.equal(get!.level, 30);
      assert.equal(typeof get!.duration, 'number');
      assert.equal(head!.method, 'HEAD');
      assert.equal(head!.bytes, 0);
      assert.equal(missing!.status, 404);
      assert.equal(missing!.route, '/*');
      assert.equal(stream!.bytes, 8);
      assert.ok(slow!.duration >= 25, `duration in ms: ${slow!.duration}`);
    } finally {
      await srv.close();
    }
  });

  test('a client that leaves: "request aborted" with status 499; skip(); level debug', async () => {
    const { lines, logger } = pinoLines('debug');
    const app = new App({ logger, accessLog: { level: 'debug', skip: (req) => req.path === '/healthz' } });
    app.get('/healthz', () => 'ok');
    app.get('/hang', () => new Promise(() => {}));
    const srv = await start(app);
    try {
      await (await fetch(srv.url + '/healthz')).text();
      await rawRequest(srv.port, 'GET /hang HTTP/1.1\r\nHost: x\r\n\r\n', { timeout: 100 });
      await eventually(() => lines.some((l) => l.msg === 'request aborted'));
      const aborted = lines.find((l) => l.msg === 'request aborted')!;
      assert.equal(aborted.status, 499);
      assert.equal(aborted.aborted, true);
      assert.equal(aborted.level, 20);
      assert.equal(aborted.reqId, undefined, 'requestId off and nobody read req.id: no id made');
      assert.ok(!lines.some((l) => l.path === '/healthz'), 'skipped');
    } finally {
      await srv.close();
    }
  });

  test('off by default: no access lines', async () => {
    const { lines, logger } = pinoLines('debug');
    const app = new App({ logger });
    app.get('/', () => {
      throw new HttpError(418);
    });
    const srv = await start(app);
    try {
      await (await fetch(srv.url + '/')).text();
      await sleep(20);
      assert.ok(!lines.some((l) => l.msg === 'request completed'));
    } finally {
      await srv.close();
    }
  });
});
