// WebSocket spans on a real server: the upgrade continues the caller's trace (traceparent on
// the handshake) and ends with its status (101, or the refusal's), each event handled gets a
// span of its own, linked to its connection's upgrade span.
import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import { SpanKind } from '@opentelemetry/api';
import { App, HttpError, silentLogger, type Server } from '@tachyon/server';
import { otel } from '../src/index.ts';
import { exporter, parentOf, provider, sleep, spanNamed, start } from './setup.ts';

let server: Server;
let url: string;
let port: number;

before(async () => {
  const app = new App({ logger: silentLogger });
  await app.register(otel({ tracerProvider: provider }));
  app.ws('/live', { events: { add: { handler: (_ws, d: { a: number; b: number }) => ({ sum: d.a + d.b }) } } });
  app.ws('/rooms/:id', {
    upgrade: (req) => {
      if (req.query.token !== 'ok') throw new HttpError(401, 'no token');
      return { room: req.params.id };
    },
    events: { add: { handler: (_ws, d: { a: number; b: number }) => ({ sum: d.a + d.b }) } },
  });
  ({ server, url, port } = await start(app));
});
after(() => server.close());
afterEach(() => exporter.reset());

/** Opens a socket (Node's WebSocket, which takes extra handshake headers), sends one event, waits for its reply. */
async function addOverSocket(headers: Record<string, string>, path = '/live'): Promise<unknown> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}${path}`, { headers } as never);
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error('websocket failed to open'));
  });
  const reply = new Promise<unknown>((resolve) => (ws.onmessage = (e) => resolve(JSON.parse(String(e.data)))));
  ws.send(JSON.stringify({ type: 'event', event: 'add', data: { a: 40, b: 2 }, ref: 1 }));
  const out = await reply;
  ws.close();
  return out;
}

test('the upgrade: a SERVER span under the caller trace, with the route; an event: a span named after it', async () => {
  const traceId = '0af7651916cd43dd8448eb211c80319c';
  const parentId = 'b7ad6b7169203331';
  const reply = await addOverSocket({ traceparent: `00-${traceId}-${parentId}-01`, 'user-agent': 'ws-test' });
  assert.deepEqual(reply, { type: 'reply', ref: 1, data: { sum: 42 } });

  const upgrade = await spanNamed('GET /live');
  assert.equal(upgrade.kind, SpanKind.SERVER);
  assert.equal(upgrade.spanContext().traceId, traceId);
  assert.equal(parentOf(upgrade)?.spanId, parentId);
  assert.deepEqual(upgrade.attributes, {
    'http.request.method': 'GET',
    'http.route': '/live',
    'url.path': '/live',
    'url.scheme': 'ws',
    'client.address': '127.0.0.1',
    'server.address': '127.0.0.1',
    'server.port': port,
    'user_agent.original': 'ws-test',
    'tachyon.websocket.upgrade': true,
    'http.response.status_code': 101,
  });

  const event = await spanNamed('ws add');
  assert.equal(event.kind, SpanKind.SERVER);
  assert.equal(event.attributes['rpc.system'], 'tachyon');
  assert.equal(event.attributes['rpc.method'], 'add');
  assert.equal(event.attributes['client.address'], '127.0.0.1');
  assert.equal(typeof event.attributes['tachyon.websocket.socket_id'], 'number');
  assert.equal(event.attributes['tachyon.websocket.route'], '/live');
  // A trace of its own, linked to the connection's upgrade span (docs/otel.md, parenting).
  assert.equal(parentOf(event), undefined);
  assert.notEqual(event.spanContext().traceId, traceId);
  assert.deepEqual(
    event.links.map((l) => l.context),
    [upgrade.spanContext()],
  );
});

test('a parameterized path: http.route is the pattern on the upgrade and the event spans; each socket links its own upgrade', async () => {
  assert.deepEqual(await addOverSocket({}, '/rooms/7?token=ok'), { type: 'reply', ref: 1, data: { sum: 42 } });
  assert.deepEqual(await addOverSocket({}, '/rooms/8?token=ok'), { type: 'reply', ref: 1, data: { sum: 42 } });
  await spanNamed('ws add');
  const upgrades = exporter.getFinishedSpans().filter((s) => s.name === 'GET /rooms/:id');
  assert.equal(upgrades.length, 2);
  for (const u of upgrades) {
    assert.equal(u.attributes['http.route'], '/rooms/:id');
    assert.equal(u.attributes['http.response.status_code'], 101);
  }
  assert.notEqual(upgrades[0]!.attributes['url.path'], upgrades[1]!.attributes['url.path']);
  const deadline = Date.now() + 2000;
  while (exporter.getFinishedSpans().filter((s) => s.name === 'ws add').length < 2 && Date.now() < deadline) await sleep(10);
  const events = exporter.getFinishedSpans().filter((s) => s.name === 'ws add');
  assert.equal(events.length, 2);
  // Each event links to the upgrade of its own socket (same url.path), never the other's.
  const ids = new Set(upgrades.map((u) => u.spanContext().spanId));
  const linked = events.map((e) => e.links[0]?.context.spanId);
  assert.deepEqual(new Set(linked), ids);
  for (const e of events) assert.equal(e.attributes['tachyon.websocket.route'], '/rooms/:id');
});

test('a refused upgrade: the span ends with the refusal status (401), no socket', async () => {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/rooms/9`);
  await new Promise<void>((resolve) => (ws.onerror = () => resolve()));
  const upgrade = await spanNamed('GET /rooms/:id');
  assert.equal(upgrade.attributes['http.response.status_code'], 401);
  assert.equal(upgrade.attributes['http.route'], '/rooms/:id');
  assert.equal(upgrade.attributes['url.path'], '/rooms/9');
  // 4xx: the client's doing, the status stays unset (as for HTTP server spans).
  assert.equal(upgrade.status.code, 0);
  assert.equal(exporter.getFinishedSpans().filter((s) => s.name.startsWith('ws ')).length, 0);
});

test('a malformed traceparent on the upgrade is ignored: a new trace, the socket works', async () => {
  const reply = await addOverSocket({ traceparent: '00-nothex-b7ad6b7169203331-01' });
  assert.deepEqual(reply, { type: 'reply', ref: 1, data: { sum: 42 } });
  const upgrade = await spanNamed('GET /live');
  assert.equal(parentOf(upgrade), undefined);
});

test('websocket: false installs no WebSocket hooks', async () => {
  const app = new App({ logger: silentLogger });
  await app.register(otel({ tracerProvider: provider, websocket: false }));
  app.ws('/live', { events: { add: { handler: () => 1 } } });
  const running = await start(app);
  try {
    const ws = new WebSocket(`${running.url.replace('http', 'ws')}/live`);
    await new Promise<void>((resolve) => (ws.onopen = () => resolve()));
    const reply = new Promise<unknown>((resolve) => (ws.onmessage = (e) => resolve(JSON.parse(String(e.data)))));
    ws.send(JSON.stringify({ type: 'event', event: 'add', data: {}, ref: 1 }));
    assert.deepEqual(await reply, { type: 'reply', ref: 1, data: 1 });
    ws.close();
    assert.equal(exporter.getFinishedSpans().length, 0);
  } finally {
    await running.server.close();
  }
});
