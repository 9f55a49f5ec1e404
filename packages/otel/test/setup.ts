// The OpenTelemetry SDK as an app would set it up, for the tests: a tracer provider with an
// in-memory exporter (spans kept in an array), AsyncLocalStorage as the context manager and
// W3C trace context as the propagator. The provider is passed to otel() rather than
// registered globally, so the no-op test still sees the API's default no-op provider.
import { context, propagation, type SpanContext } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import type { App, Server } from '@tachyon/server';

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());

export const exporter = new InMemorySpanExporter();
export const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The finished span named `name`, waiting up to 2 s for it (spans end in onResponse, after the bytes went out). */
export async function spanNamed(name: string, timeout = 2000): Promise<ReadableSpan> {
  const end = Date.now() + timeout;
  for (;;) {
    const found = exporter.getFinishedSpans().find((s) => s.name === name);
    if (found !== undefined) return found;
    if (Date.now() > end)
      throw new Error(
        `no span named ${JSON.stringify(name)}; have ${exporter
          .getFinishedSpans()
          .map((s) => s.name)
          .join(', ')}`,
      );
    await sleep(10);
  }
}

export async function start(app: App): Promise<{ server: Server; url: string; port: number }> {
  const server = await app.listen({ port: 0, host: '127.0.0.1' });
  return { server, port: server.port, url: `http://127.0.0.1:${server.port}` };
}

export const parentOf = (span: ReadableSpan): SpanContext | undefined => span.parentSpanContext;
