// Publish and delivery spans, following the messaging semantic conventions
// (https://opentelemetry.io/docs/specs/semconv/messaging/messaging-spans/), from the public
// onPublish and onDeliver hooks:
//
//   onPublish  a PRODUCER span `send` (messaging.destination.name = the topic), a child of
//              whatever is active where app.publish / socket.publish was called (a request's
//              or an event's span). With a bus to other processes, its context is injected
//              (traceparent, tracestate) into the metadata the bus carries with the message.
//   onDeliver  on the receiving process, a CONSUMER span `process` for that message: a child
//              of the publisher's span (one trace across servers) and linked to it, as the
//              conventions ask of consumers.
//
// Span names carry the operation only: topics (`room:1834`) have unbounded cardinality, and
// the conventions keep such destinations out of span names. Both spans end in their hook: a
// publish's local fan-out is synchronous C++ work inside uWS, and what the subscribers do with
// a message happens in their browsers.
import { SpanKind, ROOT_CONTEXT, context, propagation, trace, type Attributes, type Link, type Tracer } from '@opentelemetry/api';
import type { BusMeta, PublishInfo } from '@tachyon/server';

const SYSTEM = 'tachyon';

export function messagingTracing(tracer: Tracer) {
  const onPublish = (topic: string, info: PublishInfo): BusMeta | undefined => {
    const attributes: Attributes = {
      'messaging.system': SYSTEM,
      'messaging.operation.name': 'send',
      'messaging.operation.type': 'send',
      'messaging.destination.name': topic,
    };
    if (info.event !== null) attributes['tachyon.event'] = info.event;
    if (info.socket !== null) attributes['tachyon.websocket.socket_id'] = info.socket.id;
    if (info.volatile) attributes['tachyon.publish.volatile'] = true;
    const active = context.active();
    const span = tracer.startSpan('send', { kind: SpanKind.PRODUCER, attributes }, active);
    let meta: BusMeta | undefined;
    if (info.distributed) {
      meta = {};
      propagation.inject(trace.setSpan(active, span), meta);
    }
    span.end();
    return meta;
  };

  const onDeliver = (topic: string, meta: Readonly<BusMeta>): void => {
    const producer = propagation.extract(ROOT_CONTEXT, meta);
    const sent = trace.getSpanContext(producer);
    // Metadata without a usable traceparent (another plugin's, or a bad one): no span.
    if (sent === undefined) return;
    const links: Link[] = [{ context: sent }];
    const attributes: Attributes = {
      'messaging.system': SYSTEM,
      'messaging.operation.name': 'process',
      'messaging.operation.type': 'process',
      'messaging.destination.name': topic,
    };
    tracer.startSpan('process', { kind: SpanKind.CONSUMER, attributes, links }, producer).end();
  };

  return { onPublish, onDeliver };
}
