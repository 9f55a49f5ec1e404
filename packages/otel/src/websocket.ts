// WebSocket spans, from the public WebSocket hooks:
//
//   onUpgrade    a SERVER span for the handshake request, under the caller's trace
//                (traceparent on the upgrade request), named like an HTTP span (`GET /live`)
//   aroundEvent  a SERVER span per event frame (`ws chat`), in a trace of its own, active
//                while the onEvent hooks, validation and the handler run (their spans and log
//                lines are its children), ended with the event's outcome
//
// What the hooks do not tell (docs/otel.md, "Not yet"): which upgrade a socket came from, a
// socket's route, and the upgrade's outcome: the upgrade span ends in its hook.
import { SpanKind, SpanStatusCode, ROOT_CONTEXT, context, propagation, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { EventOutcome, Request, Socket } from '@tachyon/server';
import { requestHeaders } from './propagation.ts';
import { addPeerAttributes } from './http.ts';

export function websocketTracing(tracer: Tracer, ignore: ((req: Request) => boolean) | null, wsRoutes: ReadonlySet<string>) {
  const onUpgrade = (req: Request): void => {
    if (ignore?.(req) === true) return;
    const parent = propagation.extract(ROOT_CONTEXT, req, requestHeaders);
    // The upgrade request carries no route pattern: an exact path of a ws route is one.
    const route = wsRoutes.has(req.path) ? req.path : undefined;
    const attributes: Record<string, string | number | boolean> = {
      'http.request.method': 'GET',
      'url.path': req.path,
      'url.scheme': req.protocol === 'https' ? 'wss' : 'ws',
      'client.address': req.ip,
      'tachyon.websocket.upgrade': true,
    };
    addPeerAttributes(attributes, req, route);
    tracer.startSpan(route === undefined ? 'GET' : `GET ${route}`, { kind: SpanKind.SERVER, attributes }, parent).end();
  };

  const aroundEvent = (ws: Socket, event: string, run: () => EventOutcome | Promise<EventOutcome>): void => {
    const span = tracer.startSpan(
      `ws ${event}`,
      {
        kind: SpanKind.SERVER,
        attributes: { 'rpc.system': 'tachyon', 'client.address': ws.ip, 'tachyon.websocket.socket_id': ws.id },
      },
      ROOT_CONTEXT,
    );
    const out = context.with(trace.setSpan(ROOT_CONTEXT, span), run);
    if (out instanceof Promise) out.then((o) => endEvent(span, event, o));
    else endEvent(span, event, out);
  };

  return { onUpgrade, aroundEvent };
}

/**
 * The event's outcome on its span. Like HTTP server spans, only the server's own failures set
 * the status ERROR: a handler that threw (not an HttpError under 500). Refusals, validation
 * failures, unknown events and rate limiting are the client's doing: `error.type` names them
 * and the status stays unset.
 */
function endEvent(span: Span, event: string, outcome: EventOutcome): void {
  const { code, error } = outcome;
  span.setAttribute('tachyon.websocket.event.outcome', code);
  // An unknown event's name is whatever the client sent: kept out of the span name and rpc.method.
  if (code === 'UNKNOWN_EVENT') span.updateName('ws');
  else span.setAttribute('rpc.method', event);
  if (code !== 'OK') {
    const status = (error as { status?: unknown } | null)?.status;
    const serverFault = code === 'HANDLER_ERROR' && !(typeof status === 'number' && status < 500);
    span.setAttribute('error.type', serverFault && error instanceof Error ? error.constructor.name : code);
    if (error instanceof Error) span.recordException(error);
    if (serverFault) span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : undefined });
  }
  span.end();
}
