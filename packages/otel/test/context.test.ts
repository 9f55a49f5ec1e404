// Where the request's span is the active one: hooks and middleware after the plugin, the
// handler after awaits, and pino lines through the documented mixin.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { trace } from '@opentelemetry/api';
import { App } from '@tachyon/server';
import { pino } from 'pino';
import { otel, traceLogFields } from '../src/index.ts';
import { exporter, sleep, spanNamed, start, provider } from './setup.ts';

test('preHandler hooks, later middleware and the handler (after awaits) see the request span as active; pino lines carry its ids', async () => {
  const written: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line !== '') written.push(JSON.parse(line));
      done();
    },
  });
  const app = new App({ logger: pino({ mixin: traceLogFields }, sink) });
  await app.register(otel({ tracerProvider: provider }));
  const seen: Record<string, string | undefined> = {};
  const active = () => trace.getActiveSpan()?.spanContext().spanId;
  app.use((_req, _res, next) => {
    seen.middleware = active();
    return next();
  });
  app.addHook('preHandler', async () => {
    await sleep(1);
    seen.preHandler = active();
  });
  app.get('/work', async (req) => {
    await sleep(1);
    seen.handler = active();
    req.log.info('working');
    return { own: req.otel?.span.spanContext().spanId };
  });
  const running = await start(app);
  try {
    const { own } = (await (await fetch(`${running.url}/work`)).json()) as { own: string };
    const span = await spanNamed('GET /work');
    assert.equal(own, span.spanContext().spanId);
    assert.deepEqual(seen, { middleware: own, preHandler: own, handler: own });
    const line = written.find((l) => l.msg === 'working');
    assert.equal(line?.trace_id, span.spanContext().traceId);
    assert.equal(line?.span_id, own);
    const listening = written.find((l) => String(l.msg).startsWith('listening'));
    assert.equal(listening?.trace_id, undefined, 'outside a request: no ids');
  } finally {
    await running.server.close();
    exporter.reset();
  }
});
