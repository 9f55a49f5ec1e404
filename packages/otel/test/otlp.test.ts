// Real export: the SDK's OTLP/HTTP exporter (JSON encoding) sends spans to a small OTLP
// receiver this test starts: the request's span, and the event, publish and delivery spans of
// two servers on a real Redis, arrive with their names, kinds, attributes, parents and links.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { test } from 'node:test';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { App, silentLogger } from '@tachyon/server';
import { redisBus } from '@tachyon/redis';
import { RedisBroker } from '../../../test/buses/brokers.ts';
import { otel } from '../src/index.ts';
import { sleep, start } from './setup.ts';

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  links?: { traceId: string; spanId: string }[];
  name: string;
  kind: number;
  attributes: OtlpAttribute[];
}
interface OtlpRequest {
  resourceSpans: { scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[] }[];
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
}

/** An OTLP/HTTP receiver on a free port: what it received, and a tracer provider exporting to it. */
async function startCollector() {
  const received: { path: string; type: string | undefined; body: OtlpRequest }[] = [];
  const collector = createServer(async (req, res) => {
    received.push({ path: req.url ?? '', type: req.headers['content-type'], body: JSON.parse((await bodyOf(req)).toString('utf8')) });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
  const address = collector.address();
  assert.ok(address !== null && typeof address === 'object');
  const url = `http://127.0.0.1:${address.port}/v1/traces`;
  const providerFor = () => new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: new OTLPTraceExporter({ url }) })] });
  const spans = () => received.flatMap((r) => r.body.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s) => s.spans)));
  return { received, providerFor, spans, close: () => collector.close() };
}

const attributesOf = (span: OtlpSpan) =>
  Object.fromEntries(span.attributes.map((a) => [a.key, a.value.stringValue ?? a.value.intValue ?? a.value.boolValue]));

test('OTLP/HTTP: the span reaches a collector, named and attributed', async () => {
  const { received, providerFor, close } = await startCollector();
  const provider = providerFor();

  const app = new App({ logger: silentLogger });
  await app.register(otel({ tracerProvider: provider }));
  app.get('/orders/:id', (req) => ({ id: req.params.id }));
  const running = await start(app);
  try {
    assert.equal((await fetch(`${running.url}/orders/9`)).status, 200);
    await new Promise((r) => setTimeout(r, 20)); // onResponse ends the span just after the bytes
    await provider.forceFlush();
    assert.equal(received.length, 1);
    assert.equal(received[0]!.path, '/v1/traces');
    assert.equal(received[0]!.type, 'application/json');
    const scope = received[0]!.body.resourceSpans[0]!.scopeSpans[0]!;
    assert.equal(scope.scope.name, '@tachyon/otel');
    const span = scope.spans[0]!;
    assert.equal(span.name, 'GET /orders/:id');
    assert.equal(span.kind, 2, 'SPAN_KIND_SERVER');
    assert.match(span.traceId, /^[0-9a-f]{32}$/);
    const attrs = attributesOf(span);
    assert.equal(attrs['http.route'], '/orders/:id');
    assert.equal(attrs['url.path'], '/orders/9');
    assert.equal(Number(attrs['http.response.status_code']), 200);
    assert.equal(Number(attrs['server.port']), running.port);
  } finally {
    await running.server.close();
    await provider.shutdown();
    close();
  }
});

test('OTLP/HTTP: event, publish and delivery spans of two servers on Redis reach the collector, linked', async () => {
  const collector = await startCollector();
  const broker = await RedisBroker.start();
  const servers = [];
  for (let i = 0; i < 2; i++) {
    const provider = collector.providerFor();
    const app = new App({ logger: silentLogger, bus: redisBus({ url: broker.url }) });
    await app.register(otel({ tracerProvider: provider }));
    app.ws('/live', { events: { say: { handler: (ws, text: string) => void ws.publish('chat', 'said', text) } } });
    servers.push({ provider, ...(await start(app)) });
  }
  const [a, b] = servers as [(typeof servers)[0], (typeof servers)[0]];
  const open = async (port: number) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/live`);
    const messages: any[] = [];
    ws.onmessage = (e) => messages.push(JSON.parse(String(e.data)));
    await new Promise<void>((resolve, reject) => ((ws.onopen = () => resolve()), (ws.onerror = () => reject(new Error('no socket')))));
    const next = async (match: (m: any) => boolean) => {
      for (let i = 0; i < 300; i++, await sleep(10)) if (messages.some(match)) return messages.find(match);
      throw new Error(`no matching message: ${JSON.stringify(messages)}`);
    };
    return { ws, next };
  };
  try {
    const listener = await open(b.port);
    listener.ws.send(JSON.stringify({ type: 'subscribe', topic: 'chat', ref: 1 }));
    await listener.next((m) => m.type === 'subscribed');
    await sleep(300); // b's Redis subscription is in place (interest is batched)
    const speaker = await open(a.port);
    speaker.ws.send(JSON.stringify({ type: 'event', event: 'say', data: 'hi', ref: 2 }));
    await speaker.next((m) => m.type === 'reply' && m.ref === 2);
    assert.equal((await listener.next((m) => m.event === 'said')).data, 'hi');
    await sleep(50);
    for (const s of servers) await s.provider.forceFlush();

    const all = collector.spans();
    const named = (name: string) => {
      const found = all.find((s) => s.name === name);
      assert.ok(found !== undefined, `${name} in ${all.map((s) => s.name)}`);
      return found;
    };
    const event = named('ws say');
    const send = named('send');
    const processed = named('process');
    assert.equal(event.kind, 2, 'SPAN_KIND_SERVER');
    assert.equal(attributesOf(event)['rpc.method'], 'say');
    assert.equal(attributesOf(event)['tachyon.websocket.event.outcome'], 'OK');
    assert.equal(attributesOf(event)['tachyon.websocket.route'], '/live');
    // The event is linked to its socket's upgrade span (one of the two upgrades: the speaker's, on a).
    const upgrades = all.filter((s) => s.name === 'GET /live');
    assert.equal(upgrades.length, 2);
    assert.ok(upgrades.every((u) => Number(attributesOf(u)['http.response.status_code']) === 101));
    assert.equal(event.links?.length, 1);
    assert.ok(upgrades.some((u) => u.spanId === event.links![0]!.spanId && u.traceId === event.links![0]!.traceId));

    assert.equal(send.kind, 4, 'SPAN_KIND_PRODUCER');
    assert.equal(send.parentSpanId, event.spanId, 'the publish is the event’s child');
    assert.equal(send.traceId, event.traceId);
    assert.equal(attributesOf(send)['messaging.system'], 'tachyon');
    assert.equal(attributesOf(send)['messaging.destination.name'], 'chat');
    assert.equal(attributesOf(send)['messaging.operation.type'], 'send');
    assert.equal(attributesOf(send)['tachyon.event'], 'said');

    assert.equal(processed.kind, 5, 'SPAN_KIND_CONSUMER');
    assert.equal(processed.traceId, send.traceId, 'one trace across both servers');
    assert.equal(processed.parentSpanId, send.spanId);
    assert.deepEqual(
      processed.links?.map((l) => [l.traceId, l.spanId]),
      [[send.traceId, send.spanId]],
    );
    assert.equal(attributesOf(processed)['messaging.destination.name'], 'chat');
    assert.equal(attributesOf(processed)['messaging.operation.type'], 'process');
    listener.ws.close();
    speaker.ws.close();
  } finally {
    for (const s of servers) {
      await s.server.close();
      await s.provider.shutdown();
    }
    await broker.dispose();
    collector.close();
  }
});
