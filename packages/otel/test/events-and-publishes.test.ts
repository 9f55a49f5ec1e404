// Event spans that cover the handler and end with its outcome (aroundEvent), publish spans
// (messaging conventions, onPublish), and trace context across two servers on a real Redis and
// a real NATS: the delivery span on one server is linked to the publish span on the other.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { App, HttpError, silentLogger, type Bus, type Server } from '@tachyon/server';
import { redisBus, redisHistory } from '@tachyon/redis';
import { natsBus } from '@tachyon/nats';
import { z } from 'zod';
import { otel } from '../src/index.ts';
import { exporter, parentOf, provider, sleep, spanNamed, start } from './setup.ts';
import { NatsBroker, RedisBroker, type Broker } from '../../../test/buses/brokers.ts';

/** A socket with a request/reply helper over Tachyon's protocol. */
async function socket(url: string) {
  const ws = new WebSocket(url);
  const messages: any[] = [];
  ws.onmessage = (e) => messages.push(JSON.parse(String(e.data)));
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error('websocket failed to open'));
  });
  const next = async (match: (m: any) => boolean, timeout = 3000) => {
    const end = Date.now() + timeout;
    for (;;) {
      const i = messages.findIndex(match);
      if (i !== -1) return messages.splice(i, 1)[0];
      if (Date.now() > end) throw new Error(`no matching message; have ${JSON.stringify(messages)}`);
      await sleep(5);
    }
  };
  return { ws, next, send: (frame: object) => ws.send(JSON.stringify(frame)) };
}

/** A handler that fails with `err` after an await. */
const rejects = (err: Error) => async () => {
  await sleep(1);
  throw err;
};

describe('event spans', () => {
  let server: Server;
  let url: string;
  before(async () => {
    const app = new App({ logger: silentLogger });
    await app.register(otel({ tracerProvider: provider }));
    const inner = provider.getTracer('handler');
    app.ws('/live', {
      events: {
        slow: {
          handler: async (ws) => {
            await sleep(40);
            // A span the handler starts after an await is a child of the event's.
            inner.startSpan('db.query').end();
            ws.publish('room', 'moved', 1);
            return 'done';
          },
        },
        typed: { schema: z.object({ n: z.number() }), handler: (_ws, d) => d.n },
        broken: { handler: rejects(new TypeError('bug')) },
        teapot: { handler: rejects(new HttpError(418, 'short and stout')) },
      },
    });
    ({ server, url } = await start(app));
    url = `${url.replace('http', 'ws')}/live`;
  });
  after(() => server.close());
  afterEach(() => exporter.reset());

  test('the span covers an async handler; spans and publishes it makes are its children; OK', async () => {
    const c = await socket(url);
    c.send({ type: 'event', event: 'slow', ref: 1 });
    assert.equal((await c.next((m) => m.ref === 1)).data, 'done');
    c.ws.close();
    const event = await spanNamed('ws slow');
    const query = await spanNamed('db.query');
    const send = await spanNamed('send');
    assert.equal(event.kind, SpanKind.SERVER);
    assert.equal(event.attributes['tachyon.websocket.event.outcome'], 'OK');
    assert.equal(event.attributes['rpc.method'], 'slow');
    assert.equal(event.status.code, SpanStatusCode.UNSET);
    const ms = event.duration[0] * 1000 + event.duration[1] / 1e6;
    assert.ok(ms >= 35, `the span lasts as long as the handler (${ms} ms)`);
    assert.equal(parentOf(query)?.spanId, event.spanContext().spanId);
    assert.equal(parentOf(send)?.spanId, event.spanContext().spanId);
    assert.equal(send.kind, SpanKind.PRODUCER);
    assert.deepEqual(send.attributes, {
      'messaging.system': 'tachyon',
      'messaging.operation.name': 'send',
      'messaging.operation.type': 'send',
      'messaging.destination.name': 'room',
      'tachyon.event': 'moved',
      'tachyon.websocket.socket_id': event.attributes['tachyon.websocket.socket_id'] as number,
    });
  });

  test('outcomes: a handler that throws is an error (exception recorded); client mistakes are named, status unset', async () => {
    const c = await socket(url);
    c.send({ type: 'event', event: 'broken', ref: 1 });
    c.send({ type: 'event', event: 'typed', data: { n: 'x' }, ref: 2 });
    c.send({ type: 'event', event: 'teapot', ref: 3 });
    c.send({ type: 'event', event: 'no-such-event', ref: 4 });
    for (const ref of [1, 2, 3, 4]) await c.next((m) => m.ref === ref);
    c.ws.close();
    const broken = await spanNamed('ws broken');
    assert.equal(broken.attributes['tachyon.websocket.event.outcome'], 'HANDLER_ERROR');
    assert.equal(broken.attributes['error.type'], 'TypeError');
    assert.equal(broken.status.code, SpanStatusCode.ERROR);
    assert.equal(broken.events[0]?.name, 'exception');
    assert.equal(broken.events[0]?.attributes?.['exception.message'], 'bug');

    const typed = await spanNamed('ws typed');
    assert.equal(typed.attributes['error.type'], 'VALIDATION');
    assert.equal(typed.status.code, SpanStatusCode.UNSET);

    const teapot = await spanNamed('ws teapot');
    assert.equal(teapot.attributes['error.type'], 'HANDLER_ERROR', 'an HttpError under 500 is the client’s');
    assert.equal(teapot.status.code, SpanStatusCode.UNSET);

    const unknown = await spanNamed('ws');
    assert.equal(unknown.attributes['error.type'], 'UNKNOWN_EVENT');
    assert.equal(unknown.attributes['rpc.method'], undefined, 'a name the client made up stays out of the span');
  });

  test('a publish outside any span starts a trace; on one server nothing is injected for the bus', async () => {
    const app = new App({ logger: silentLogger });
    await app.register(otel({ tracerProvider: provider }));
    const seen: unknown[] = [];
    app.addHook('onPublish', (_topic, info) => void seen.push(info.distributed));
    app.ws('/live', {});
    const running = await start(app);
    try {
      app.publishRaw('raw-topic', 'bytes');
      const send = await spanNamed('send');
      assert.equal(parentOf(send), undefined);
      assert.equal(send.attributes['messaging.destination.name'], 'raw-topic');
      assert.equal(send.attributes['tachyon.event'], undefined, 'a raw publish has no event name');
      assert.deepEqual(seen, [false]);
    } finally {
      await running.server.close();
    }
  });

  test('publishes: false installs no publish hooks', async () => {
    const app = new App({ logger: silentLogger });
    await app.register(otel({ tracerProvider: provider, publishes: false }));
    app.ws('/live', {});
    const running = await start(app);
    app.publish('room', 'e', 1);
    await running.server.close();
    assert.equal(exporter.getFinishedSpans().filter((s) => s.name === 'send').length, 0);
    assert.throws(() => otel({ publishes: 1 } as never), /otel\(\): publishes must be true or false, got 1/);
  });
});

/** One server with its own tracer provider and exporter (two "services" in one test process). */
async function tracedServer(bus: Bus, historyOn?: string) {
  const spans = new InMemorySpanExporter();
  const own = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] });
  const app = new App({ logger: silentLogger, bus });
  await app.register(otel({ tracerProvider: own }));
  // With history, the topic's messages are positioned by a store on the same Redis first.
  if (historyOn !== undefined) app.topic('chat', { history: { size: 10, store: redisHistory({ url: historyOn, prefix: 'otel:' }) } });
  app.ws('/live', {
    events: {
      // A socket's publish on the topic (Socket.publish: its other subscribers, and the bus).
      say: { handler: (ws, text: string) => void ws.publish('chat', 'said', text) },
    },
  });
  app.get('/say', (req) => {
    const sent = app.publish('chat', 'said', req.query.text);
    return { sent, traceId: trace.getActiveSpan()?.spanContext().traceId };
  });
  const running = await start(app);
  return { ...running, spans };
}

async function finished(spans: InMemorySpanExporter, name: string): Promise<ReadableSpan> {
  for (let i = 0; i < 300; i++) {
    const s = spans.getFinishedSpans().find((x) => x.name === name);
    if (s !== undefined) return s;
    await sleep(10);
  }
  throw new Error(`no span ${name}: ${spans.getFinishedSpans().map((s) => s.name)}`);
}

const BROKERS: [string, () => Promise<Broker>, (b: Broker) => Bus][] = [
  ['redis', () => RedisBroker.start(), (b) => redisBus({ url: (b as RedisBroker).url })],
  ['nats', () => NatsBroker.start(), (b) => natsBus({ servers: (b as NatsBroker).url })],
];

for (const [name, startBroker, busOn] of BROKERS) {
  test(`two servers on ${name}: the delivery span on one is linked to (and a child of) the publish span on the other`, async () => {
    const broker = await startBroker();
    const a = await tracedServer(busOn(broker));
    const b = await tracedServer(busOn(broker));
    try {
      const listener = await socket(`ws://127.0.0.1:${b.port}/live`);
      listener.send({ type: 'subscribe', topic: 'chat', ref: 1 });
      await listener.next((m) => m.type === 'subscribed');
      await sleep(300); // b's broker subscription is in place (interest is batched)
      const res = await fetch(`${a.url}/say?text=hi`);
      const { traceId } = (await res.json()) as { traceId: string };
      assert.deepEqual(
        await listener.next((m) => m.event === 'said'),
        { topic: 'chat', event: 'said', data: 'hi' },
        'the browser gets the usual bytes',
      );
      listener.ws.close();

      const request = await finished(a.spans, 'GET /say');
      const send = await finished(a.spans, 'send');
      assert.equal(send.spanContext().traceId, traceId);
      assert.equal(parentOf(send)?.spanId, request.spanContext().spanId, 'the publish span is the request’s child');
      const processed = await finished(b.spans, 'process');
      assert.equal(processed.kind, SpanKind.CONSUMER);
      assert.deepEqual(
        processed.links.map((l) => [l.context.traceId, l.context.spanId]),
        [[traceId, send.spanContext().spanId]],
      );
      assert.equal(parentOf(processed)?.spanId, send.spanContext().spanId);
      assert.equal(processed.spanContext().traceId, traceId, 'one trace across both servers');
      assert.equal(processed.attributes['messaging.destination.name'], 'chat');
      assert.equal(a.spans.getFinishedSpans().filter((s) => s.name === 'process').length, 0, 'a server does not process its own publish');
    } finally {
      await a.server.close();
      await b.server.close();
      await broker.dispose();
    }
  });
}

test('a history topic on Redis (the Redis history store): the positioned message carries the trace to the other server', async () => {
  const broker = await RedisBroker.start();
  const a = await tracedServer(redisBus({ url: broker.url }), broker.url);
  const b = await tracedServer(redisBus({ url: broker.url }), broker.url);
  try {
    const listener = await socket(`ws://127.0.0.1:${b.port}/live`);
    listener.send({ type: 'subscribe', topic: 'chat', ref: 1 });
    await listener.next((m) => m.type === 'subscribed');
    await sleep(300); // b's broker subscription is in place (interest is batched)

    // The app's publish, from a request on a.
    const res = await fetch(`${a.url}/say?text=hi`);
    const { traceId } = (await res.json()) as { traceId: string };
    const got = await listener.next((m) => m.event === 'said');
    assert.equal(got.data, 'hi');
    assert.equal(typeof got.offset, 'number', 'the message was positioned by the history store');
    const send = await finished(a.spans, 'send');
    assert.equal(send.spanContext().traceId, traceId);
    const processed = await finished(b.spans, 'process');
    assert.deepEqual(
      processed.links.map((l) => [l.context.traceId, l.context.spanId]),
      [[traceId, send.spanContext().spanId]],
    );
    assert.equal(parentOf(processed)?.spanId, send.spanContext().spanId);
    assert.equal(processed.attributes['messaging.destination.name'], 'chat');

    // A socket's publish on a, from an event handler: the delivery on b joins the event's trace.
    a.spans.reset();
    b.spans.reset();
    const speaker = await socket(`ws://127.0.0.1:${a.port}/live`);
    speaker.send({ type: 'event', event: 'say', data: 'from a socket', ref: 2 });
    await speaker.next((m) => m.type === 'reply' && m.ref === 2);
    assert.equal((await listener.next((m) => m.event === 'said')).data, 'from a socket');
    const event = await finished(a.spans, 'ws say');
    const socketSend = await finished(a.spans, 'send');
    assert.equal(parentOf(socketSend)?.spanId, event.spanContext().spanId);
    const socketProcessed = await finished(b.spans, 'process');
    assert.equal(parentOf(socketProcessed)?.spanId, socketSend.spanContext().spanId);
    assert.equal(socketProcessed.spanContext().traceId, event.spanContext().traceId);
    listener.ws.close();
    speaker.ws.close();
  } finally {
    await a.server.close();
    await b.server.close();
    await broker.dispose();
  }
});
