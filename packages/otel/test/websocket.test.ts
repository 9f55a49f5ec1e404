// WebSocket spans on a real server: the upgrade continues the caller's trace (traceparent on
// the handshake), each event handled gets a span of its own.
import assert from 'node:assert/strict';
import { after, afterEach, before, test } from 'node:test';
import { SpanKind } from '@opentelemetry/api';
import { App, silentLogger, type Server } from '@tachyon/server';
import { otel } from '../src/index.ts';
import { exporter, parentOf, provider, spanNamed, start } from './setup.ts';

let server: Server;
let url: string;
let port: number;

before(async () => {
  const app = new App({ logger: silentLogger });
  await app.register(otel({ tracerProvider: provider }));
  app.ws('/live', { events: { add: { handler: (_ws, d: { a: number; b: number }) => ({ sum: d.a + d.b }) } } });
  ({ server, url, port } = await start(app));
});
after(() => server.close());
afterEach(() => exporter.reset());

/** Opens a socket (Node's WebSocket, which takes extra handshake headers), sends one event, waits for its reply. */
async function addOverSocket(headers: Record<string, string>): Promise<unknown> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/live`, { headers } as never);
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
  });

  const event = await spanNamed('ws add');
  assert.equal(event.kind, SpanKind.SERVER);
  assert.equal(event.attributes['rpc.system'], 'tachyon');
  assert.equal(event.attributes['rpc.method'], 'add');
  assert.equal(event.attributes['client.address'], '127.0.0.1');
  assert.equal(typeof event.attributes['tachyon.websocket.socket_id'], 'number');
  // A trace of its own: the socket's upgrade is not reachable from the event hook (docs/otel.md).
  assert.equal(parentOf(event), undefined);
  assert.notEqual(event.spanContext().traceId, traceId);
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
