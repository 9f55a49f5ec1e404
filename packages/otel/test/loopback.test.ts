// app.request() (no port, docs/testing.md) goes through the same hooks: the span is made the same way.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { App, silentLogger } from '@tachyon/server';
import { otel } from '../src/index.ts';
import { exporter, provider, spanNamed } from './setup.ts';

test('app.request(): a span with the route, the status, and the incoming traceparent continued', async () => {
  const app = new App({ logger: silentLogger });
  await app.register(otel({ tracerProvider: provider }));
  app.get('/items/:id', (req) => ({ id: req.params.id }));
  const traceId = '11111111111111111111111111111111';
  const res = await app.request('/items/3', { headers: { traceparent: `00-${traceId}-2222222222222222-01` } });
  assert.equal(res.status, 200);
  const span = await spanNamed('GET /items/:id');
  assert.equal(span.spanContext().traceId, traceId);
  assert.equal(span.attributes['http.response.status_code'], 200);
  assert.equal(span.attributes['http.route'], '/items/:id');
  await app.close();
  exporter.reset();
});
