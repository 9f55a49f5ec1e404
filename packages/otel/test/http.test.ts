// HTTP server spans on a real server: names, attributes, status, errors, aborts, timeouts,
// incoming trace context, children of the handler's work, trace ids on log lines.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, afterEach, before, describe, test } from 'node:test';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { App, HttpError, silentLogger, type Logger, type Server } from '@tachyon/server';
import { z } from 'zod';
import { otel, withTraceIds } from '../src/index.ts';
import { splitHost } from '../src/http.ts';
import { exporter, parentOf, provider, sleep, spanNamed, start } from './setup.ts';

const lines: { level: string; obj: Record<string, unknown>; msg: string | undefined }[] = [];
const record =
  (level: string) =>
  (obj: object | string, msg?: string): void => {
    lines.push(typeof obj === 'string' ? { level, obj: {}, msg: obj } : { level, obj: obj as Record<string, unknown>, msg });
  };
const recorder: Logger = { error: record('error'), warn: record('warn'), info: record('info'), debug: record('debug') };
const childTracer = provider.getTracer('handler');

let server: Server;
let url: string;
let port: number;

before(async () => {
  const app = new App({ logger: withTraceIds(recorder) });
  await app.register(otel({ tracerProvider: provider, ignore: (req) => req.path === '/healthz' }));
  app.get('/users/:id', (req) => ({ id: req.params.id, traced: req.otel !== null }));
  app.get('/healthz', (req) => ({ traced: req.otel !== null }));
  app.get('/boom', () => {
    throw new Error('db down');
  });
  app.get('/async-boom', async () => {
    await sleep(1);
    throw new TypeError('bad thing');
  });
  app.get('/teapot', () => {
    throw new HttpError(418, 'short and stout');
  });
  app.post('/users', { body: z.object({ name: z.string() }) }, (req) => ({ name: req.body.name }));
  app.get('/child', async (req) => {
    await sleep(2);
    const span = childTracer.startSpan('db.query');
    await sleep(1);
    span.end();
    req.log.info({ step: 'queried' }, 'after the query');
    return { ok: true };
  });
  app.get('/slow', { timeout: 50 }, () => new Promise(() => {}));
  app.get('/hang', async (req) => {
    await new Promise((resolve) => req.signal.addEventListener('abort', resolve));
  });
  app.any('/any', (req) => ({ method: req.method }));
  app.get('/status/:code', (_req, res) => {
    res.status(Number(_req.params.code)).json({});
  });
  ({ server, url, port } = await start(app));
});
after(() => server.close());
afterEach(() => {
  exporter.reset();
  lines.length = 0;
});

describe('HTTP spans', () => {
  test('a request that succeeds: a SERVER span named after the route, with the conventions attributes', async () => {
    const res = await fetch(`${url}/users/7?x=1`, { headers: { 'user-agent': 'otel-test/1.0' } });
    assert.deepEqual(await res.json(), { id: '7', traced: true });
    const span = await spanNamed('GET /users/:id');
    assert.equal(span.kind, SpanKind.SERVER);
    assert.equal(span.status.code, SpanStatusCode.UNSET);
    assert.deepEqual(span.attributes, {
      'http.request.method': 'GET',
      'http.route': '/users/:id',
      'url.path': '/users/7',
      'url.scheme': 'http',
      'server.address': '127.0.0.1',
      'server.port': port,
      'client.address': '127.0.0.1',
      'user_agent.original': 'otel-test/1.0',
      'network.protocol.version': '1.1',
      'http.response.status_code': 200,
    });
    assert.equal(parentOf(span), undefined, 'a new trace: no caller context was sent');
    assert.equal(span.instrumentationScope.name, '@tachyon/otel');
  });

  test('a 404: named by the method alone, no http.route, status unset', async () => {
    assert.equal((await fetch(`${url}/nowhere`)).status, 404);
    const span = await spanNamed('GET');
    assert.equal(span.attributes['http.route'], undefined);
    assert.equal(span.attributes['http.response.status_code'], 404);
    assert.equal(span.status.code, SpanStatusCode.UNSET);
    assert.equal(span.attributes['error.type'], undefined);
  });

  test('a thrown error: 500, the exception recorded, error.type and status ERROR; the framework log line carries the ids', async () => {
    assert.equal((await fetch(`${url}/boom`)).status, 500);
    const span = await spanNamed('GET /boom');
    assert.equal(span.attributes['http.response.status_code'], 500);
    assert.equal(span.attributes['error.type'], 'Error');
    assert.deepEqual(span.status, { code: SpanStatusCode.ERROR, message: 'db down' });
    const exception = span.events.find((e) => e.name === 'exception');
    assert.equal(exception?.attributes?.['exception.message'], 'db down');
    assert.match(String(exception?.attributes?.['exception.stacktrace']), /db down/);
    const line = lines.find((l) => l.msg === 'request failed');
    assert.ok(line, 'the framework logged the failure');
    assert.equal(line.obj.trace_id, span.spanContext().traceId);
    assert.equal(line.obj.span_id, span.spanContext().spanId);
    assert.equal(line.obj.trace_flags, '01');
  });

  test('an async rejection: error.type is the error class', async () => {
    assert.equal((await fetch(`${url}/async-boom`)).status, 500);
    const span = await spanNamed('GET /async-boom');
    assert.equal(span.attributes['error.type'], 'TypeError');
    assert.equal(span.status.code, SpanStatusCode.ERROR);
    assert.equal(lines.find((l) => l.msg === 'request failed')?.obj.trace_id, span.spanContext().traceId);
  });

  test('a 4xx HttpError and a validation failure (400) leave the status unset, no exception', async () => {
    assert.equal((await fetch(`${url}/teapot`)).status, 418);
    const teapot = await spanNamed('GET /teapot');
    assert.equal(teapot.attributes['http.response.status_code'], 418);
    assert.equal(teapot.status.code, SpanStatusCode.UNSET);
    assert.equal(teapot.events.length, 0);
    const res = await fetch(`${url}/users`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":3}' });
    assert.equal(res.status, 400);
    const post = await spanNamed('POST /users');
    assert.equal(post.attributes['http.response.status_code'], 400);
    assert.equal(post.attributes['http.request.method'], 'POST');
    assert.equal(post.status.code, SpanStatusCode.UNSET);
    assert.equal(post.attributes['error.type'], undefined);
  });

  test('a 5xx answered without an error: error.type is the status', async () => {
    assert.equal((await fetch(`${url}/status/503`)).status, 503);
    const span = await spanNamed('GET /status/:code');
    assert.equal(span.attributes['error.type'], '503');
    assert.equal(span.status.code, SpanStatusCode.ERROR);
  });

  test('an incoming traceparent is continued: same trace, the caller span as parent, tracestate kept', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';
    await fetch(`${url}/users/1`, { headers: { traceparent: `00-${traceId}-${parentId}-01`, tracestate: 'vendor=abc' } });
    const span = await spanNamed('GET /users/:id');
    assert.equal(span.spanContext().traceId, traceId);
    assert.equal(parentOf(span)?.spanId, parentId);
    assert.equal(parentOf(span)?.isRemote, true);
    assert.equal(span.spanContext().traceState?.get('vendor'), 'abc');
  });

  test('a malformed traceparent is ignored: a new trace, no parent, the request served', async () => {
    for (const bad of ['00-zzzz-00f067aa0ba902b7-01', '00-00000000000000000000000000000000-00f067aa0ba902b7-01', 'garbage', '']) {
      const res = await fetch(`${url}/users/2`, { headers: { traceparent: bad } });
      assert.equal(res.status, 200, bad);
      const span = await spanNamed('GET /users/:id');
      assert.equal(parentOf(span), undefined, bad);
      assert.match(span.spanContext().traceId, /^[0-9a-f]{32}$/);
      assert.notEqual(span.spanContext().traceId, '00000000000000000000000000000000');
      exporter.reset();
    }
  });

  test("a span the handler starts after an await is the request span's child; req.log lines carry the ids", async () => {
    await fetch(`${url}/child`);
    const server = await spanNamed('GET /child');
    const child = await spanNamed('db.query');
    assert.equal(child.spanContext().traceId, server.spanContext().traceId);
    assert.equal(parentOf(child)?.spanId, server.spanContext().spanId);
    const line = lines.find((l) => l.msg === 'after the query');
    assert.equal(line?.obj.trace_id, server.spanContext().traceId);
    assert.equal(line?.obj.span_id, server.spanContext().spanId);
    assert.equal(line?.obj.step, 'queried');
    // Outside any request: no ids on the line.
    withTraceIds(recorder).info('outside');
    assert.deepEqual(lines.at(-1), { level: 'info', obj: {}, msg: 'outside' });
  });

  test('a timed-out request: marked, the 503 recorded as an error', async () => {
    assert.equal((await fetch(`${url}/slow`)).status, 503);
    const span = await spanNamed('GET /slow');
    assert.equal(span.attributes['tachyon.request.timed_out'], true);
    assert.ok(span.events.some((e) => e.name === 'request timed out'));
    assert.equal(span.attributes['http.response.status_code'], 503);
    assert.equal(span.status.code, SpanStatusCode.ERROR);
  });

  test('a request the client abandons: marked aborted, and the span still ends', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.write('GET /hang HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await sleep(50);
    socket.destroy();
    const span = await spanNamed('GET /hang');
    assert.equal(span.attributes['tachyon.request.aborted'], true);
    assert.ok(span.events.some((e) => e.name === 'client closed the connection'));
  });

  test('a method outside the conventions: _OTHER, the original kept, HTTP in the name', async () => {
    assert.equal((await fetch(`${url}/any`, { method: 'PURGE' })).status, 200);
    const span = await spanNamed('HTTP /any');
    assert.equal(span.attributes['http.request.method'], '_OTHER');
    assert.equal(span.attributes['http.request.method_original'], 'PURGE');
  });

  test('Host headers: port split off, IPv6 brackets removed, a malformed port ignored', async () => {
    assert.deepEqual(splitHost('example.com:8080'), { address: 'example.com', port: 8080 });
    assert.deepEqual(splitHost('example.com'), { address: 'example.com', port: undefined });
    assert.deepEqual(splitHost('[::1]:3000'), { address: '::1', port: 3000 });
    assert.deepEqual(splitHost('[::1]'), { address: '::1', port: undefined });
    assert.deepEqual(splitHost('example.com:99999'), { address: 'example.com:99999', port: undefined });
    assert.deepEqual(splitHost('example.com:'), { address: 'example.com:', port: undefined });
    assert.deepEqual(splitHost('a:b'), { address: 'a:b', port: undefined });
  });

  test('ignored requests get no span and req.otel is null', async () => {
    assert.deepEqual(await (await fetch(`${url}/healthz`)).json(), { traced: false });
    await sleep(50);
    assert.equal(exporter.getFinishedSpans().length, 0);
  });
});

describe('zero cost without a tracer provider', () => {
  test('with the API default (no provider registered) nothing is installed: no hooks, no decoration', async () => {
    assert.equal(trace.getTracerProvider().getTracer('x').startSpan('x').isRecording(), false);
    const app = new App({ logger: silentLogger });
    await app.register(otel());
    app.get('/', (req) => ({ decorated: 'otel' in req }));
    const running = await start(app);
    try {
      assert.deepEqual(await (await fetch(`${running.url}/`)).json(), { decorated: false });
    } finally {
      await running.server.close();
    }
  });
});

describe('bad options', () => {
  test('each is refused at otel(), with a clear message', () => {
    assert.throws(() => otel('x' as never), /otel\(options\): options must be an object, got string/);
    assert.throws(() => otel(null as never), /options must be an object, got null/);
    assert.throws(() => otel({ tracr: {} } as never), /otel\(\): unknown option "tracr" \(did you mean "tracer"\?\)/);
    assert.throws(() => otel({ tracer: 5 } as never), /tracer must be an OpenTelemetry Tracer/);
    assert.throws(() => otel({ tracerProvider: {} } as never), /tracerProvider must be an OpenTelemetry TracerProvider/);
    assert.throws(() => otel({ tracer: provider.getTracer('a'), tracerProvider: provider }), /not both/);
    assert.throws(() => otel({ ignore: '/healthz' } as never), /ignore must be a function/);
    assert.throws(() => otel({ websocket: 'yes' } as never), /websocket must be true or false/);
    assert.throws(() => withTraceIds(null as never), /logger must have/);
  });

  test('registered twice: refused by name', async () => {
    const app = new App({ logger: silentLogger });
    await app.register(otel({ tracerProvider: provider }));
    assert.throws(() => app.register(otel({ tracerProvider: provider })), /plugin "@tachyon\/otel" is registered twice/);
    await app.close();
  });
});
