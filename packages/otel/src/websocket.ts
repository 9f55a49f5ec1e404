// WebSocket spans, from the public WebSocket hooks:
//
//   onUpgrade     a SERVER span for the handshake request, under the caller's trace
//                 (traceparent on the upgrade request), named like an HTTP span (`GET /live`,
//                 the route's pattern: `req.route`), kept on `req.otel`
//   onUpgradeEnd  the handshake's outcome: 101 (or the refusal's status) on the span, which
//                 ends; an accepted socket remembers the span's context
//   aroundEvent   a SERVER span per event frame (`ws chat`), in a trace of its own and *linked*
//                 to its connection's upgrade span, active while the onEvent hooks, validation
//                 and the handler run (their spans and log lines are its children), ended with
//                 the event's outcome
import {
  SpanKind,
  SpanStatusCode,
  ROOT_CONTEXT,
  context,
  propagation,
  trace,
  type Link,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import type { EventOutcome, Request, Socket, UpgradeOutcome } from '@tachyon/server';
import { requestHeaders } from './propagation.ts';
import { addPeerAttributes, RequestTrace } from './http.ts';

export function websocketTracing(tracer: Tracer, ignore: ((req: Request) => boolean) | null) {
  // Each open socket's upgrade span, for the events' links (gone with the socket).
  const upgrades = new WeakMap<Socket<any>, SpanContext>();

  const onUpgrade = (req: Request): void => {
    if (ignore?.(req) === true) return;
    const parent = propagation.extract(ROOT_CONTEXT, req, requestHeaders);
    const attributes: Record<string, string | number | boolean> = {
      'http.request.method': 'GET',
      'url.path': req.path,
      'url.scheme': req.protocol === 'https' ? 'wss' : 'ws',
      'client.address': req.ip,
      'tachyon.websocket.upgrade': true,
    };
    addPeerAttributes(attributes, req, req.route);
    const span = tracer.startSpan(`GET ${req.route}`, { kind: SpanKind.SERVER, attributes }, parent);
    req.otel = new RequestTrace(span, trace.setSpan(parent, span));
  };

  const onUpgradeEnd = (req: Request, { status, socket }: UpgradeOutcome): void => {
    const t = req.otel;
    if (t === null || t === undefined) return; // ignored, or refused before the onUpgrade hooks (origin, rate limit)
    const span = t.span;
    if (status === 0) {
      span.setAttribute('tachyon.request.aborted', true);
      span.addEvent('client closed the connection');
    } else {
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) {
        span.setAttribute('error.type', String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
    if (socket !== null) upgrades.set(socket, span.spanContext());
    span.end();
  };

  const aroundEvent = (ws: Socket, event: string, run: () => EventOutcome | Promise<EventOutcome>): void => {
    const upgrade = upgrades.get(ws);
    const links: Link[] | undefined = upgrade === undefined ? undefined : [{ context: upgrade }];
    const span = tracer.startSpan(
      `ws ${event}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'rpc.system': 'tachyon',
          'client.address': ws.ip,
          'tachyon.websocket.socket_id': ws.id,
          'tachyon.websocket.route': ws.route,
        },
        links,
      },
      ROOT_CONTEXT,
    );
    const out = context.with(trace.setSpan(ROOT_CONTEXT, span), run);
    if (out instanceof Promise) out.then((o) => endEvent(span, event, o));
    else endEvent(span, event, out);
  };

  return { onUpgrade, onUpgradeEnd, aroundEvent };
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
