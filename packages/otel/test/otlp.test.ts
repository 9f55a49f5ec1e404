// Real export: the SDK's OTLP/HTTP exporter (JSON encoding) sends the request's span to a
// small OTLP receiver this test starts; the span arrives with its name, kind and attributes.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { test } from 'node:test';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { App, silentLogger } from '@tachyon/server';
import { otel } from '../src/index.ts';
import { start } from './setup.ts';

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
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

test('OTLP/HTTP: the span reaches a collector, named and attributed', async () => {
  const received: { path: string; type: string | undefined; body: OtlpRequest }[] = [];
  const collector = createServer(async (req, res) => {
    received.push({ path: req.url ?? '', type: req.headers['content-type'], body: JSON.parse((await bodyOf(req)).toString('utf8')) });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
  const address = collector.address();
  assert.ok(address !== null && typeof address === 'object');
  const provider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter: new OTLPTraceExporter({ url: `http://127.0.0.1:${address.port}/v1/traces` }) })],
  });

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
    const attrs = Object.fromEntries(span.attributes.map((a) => [a.key, a.value.stringValue ?? a.value.intValue ?? a.value.boolValue]));
    assert.equal(attrs['http.route'], '/orders/:id');
    assert.equal(attrs['url.path'], '/orders/9');
    assert.equal(Number(attrs['http.response.status_code']), 200);
    assert.equal(Number(attrs['server.port']), running.port);
  } finally {
    await running.server.close();
    await provider.shutdown();
    collector.close();
  }
});
