// WebSocket spans, from the public WebSocket hooks:
//
//   onUpgrade  a SERVER span for the handshake request, under the caller's trace
//              (traceparent on the upgrade request), named like an HTTP span (`GET /live`)
//   onEvent    a SERVER span per event frame (`ws chat`), in a trace of its own
//
// What the hooks do not tell (docs/otel.md, "Not yet"): when an event's handler finished and
// how (reply or error), which upgrade a socket came from, and a socket's route. So both spans
// end in the hook that starts them: they mark that the handshake or the event reached the
// app, with its attributes; their duration is the hook's, not the handler's.
import { SpanKind, ROOT_CONTEXT, propagation, type Tracer } from '@opentelemetry/api';
import type { Request, Socket } from '@tachyon/server';
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

  const onEvent = (ws: Socket, event: string): void => {
    tracer
      .startSpan(
        `ws ${event}`,
        {
          kind: SpanKind.SERVER,
          attributes: {
            'rpc.system': 'tachyon',
            'rpc.method': event,
            'client.address': ws.ip,
            'tachyon.websocket.socket_id': ws.id,
          },
        },
        ROOT_CONTEXT,
      )
      .end();
  };

  return { onUpgrade, onEvent };
}
