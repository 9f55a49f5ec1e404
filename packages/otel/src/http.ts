// The server span of each HTTP request, following the HTTP semantic conventions
// (https://opentelemetry.io/docs/specs/semconv/http/http-spans/):
//
//   onRequest   the caller's context is extracted (traceparent), the span started: name
//               `GET /users/:id`, method, route, path, scheme, server and client addresses
//   middleware  the span's context made active for everything after it (hooks, validation,
//               the handler and its async work), so spans the handler starts are children
//   onError     5xx: the exception recorded, error.type, status ERROR (4xx leave it unset)
//   onTimeout / onAbort   marked on the span
//   onResponse  the status code, and the span ends
import {
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  ROOT_CONTEXT,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { Next, Request, Response, ResponseInfo } from '@tachyon/server';
import { requestHeaders } from './propagation.ts';

/** What the plugin keeps per traced request (`req.otel`). */
export class RequestTrace {
  /** The request's server span: add attributes or events to it. */
  readonly span: Span;
  /** The context the request's code runs in (the span, under the caller's trace). */
  readonly context: Context;
  /** @internal error.type, once an error set it (the status alone sets it otherwise). */
  errorType: string | undefined = undefined;

  constructor(span: Span, ctx: Context) {
    this.span = span;
    this.context = ctx;
  }
}

// The methods the conventions know; others are reported as `_OTHER` (unbounded cardinality otherwise).
const KNOWN_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE', 'QUERY']);

/** The hooks and the middleware, made once per app. `routed(req)` says whether a route matched (not the not-found answer). */
export function httpTracing(tracer: Tracer, ignore: ((req: Request) => boolean) | null, routed: (req: Request) => boolean) {
  const onRequest = (req: Request): void => {
    if (ignore?.(req) === true) return;
    const parent = propagation.extract(ROOT_CONTEXT, req, requestHeaders);
    const known = KNOWN_METHODS.has(req.method);
    const method = known ? req.method : '_OTHER';
    const route = routed(req) ? req.route : undefined;
    // The conventions' span name: `{method} {route}`, `HTTP` standing for an unknown method.
    const named = known ? req.method : 'HTTP';
    const span = tracer.startSpan(
      route === undefined ? named : `${named} ${route}`,
      { kind: SpanKind.SERVER, attributes: startAttributes(req, method, route) },
      parent,
    );
    if (!known) span.setAttribute('http.request.method_original', req.method);
    req.otel = new RequestTrace(span, trace.setSpan(parent, span));
  };

  // Runs the rest of the chain inside the span's context: AsyncLocalStorage carries it into
  // every promise and callback the handler starts from there.
  const activate = (req: Request, _res: Response, next: Next): Promise<void> => {
    const t = req.otel;
    return t === null ? next() : context.with(t.context, next);
  };

  const onError = (err: unknown, req: Request): void => {
    const t = req.otel;
    if (t === null || statusOf(err) < 500) return;
    const e = err instanceof Error ? err : new Error(String(err));
    t.errorType = e.constructor.name === 'Error' ? e.name : e.constructor.name;
    t.span.recordException(e);
    t.span.setAttribute('error.type', t.errorType);
    t.span.setStatus({ code: SpanStatusCode.ERROR, message: e.message });
  };

  const onTimeout = (req: Request): void => {
    const t = req.otel;
    if (t === null) return;
    t.span.setAttribute('tachyon.request.timed_out', true);
    t.span.addEvent('request timed out');
  };

  const onAbort = (req: Request): void => {
    const t = req.otel;
    if (t === null) return;
    t.span.setAttribute('tachyon.request.aborted', true);
    t.span.addEvent('client closed the connection');
  };

  const onResponse = (req: Request, _res: Response, info: ResponseInfo): void => {
    const t = req.otel;
    if (t === null) return;
    const span = t.span;
    span.setAttribute('http.response.status_code', info.status);
    if (info.status >= 500 && t.errorType === undefined) {
      span.setAttribute('error.type', String(info.status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  };

  return { onRequest, activate, onError, onTimeout, onAbort, onResponse };
}

/** Attributes known when the request arrives (samplers see them). */
function startAttributes(req: Request, method: string, route: string | undefined): Record<string, string | number> {
  const attributes: Record<string, string | number> = {
    'http.request.method': method,
    'url.path': req.path,
    'url.scheme': req.protocol,
    'client.address': req.ip,
    'network.protocol.version': '1.1',
  };
  addPeerAttributes(attributes, req, route);
  return attributes;
}

/** The route, the server address from Host, and the user agent: what HTTP and WebSocket upgrade spans share. */
export function addPeerAttributes(attributes: Record<string, string | number | boolean>, req: Request, route: string | undefined): void {
  if (route !== undefined) attributes['http.route'] = route;
  const host = req.header('host');
  if (host !== undefined) {
    const { address, port } = splitHost(host);
    attributes['server.address'] = address;
    if (port !== undefined) attributes['server.port'] = port;
  }
  const agent = req.header('user-agent');
  if (agent !== undefined) attributes['user_agent.original'] = agent;
}

/**
 * `example.com:8080` → address and port; `[::1]:3000` → `::1` and 3000 (the conventions write
 * IPv6 addresses without brackets); no port or a malformed one: no port (the scheme's default).
 */
export function splitHost(host: string): { address: string; port: number | undefined } {
  const colon = host.lastIndexOf(':');
  const bracket = host.lastIndexOf(']');
  let address = host;
  let port: number | undefined;
  if (colon !== -1 && colon > bracket) {
    const n = Number(host.slice(colon + 1));
    if (Number.isInteger(n) && n > 0 && n < 65536 && colon + 1 < host.length) {
      address = host.slice(0, colon);
      port = n;
    }
  }
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1);
  return { address, port };
}

/** The status an error answers with: its `status` or `statusCode` when 4xx/5xx, else 500 (as Tachyon's default handler). */
function statusOf(err: unknown): number {
  const s = (err as { status?: unknown; statusCode?: unknown } | null)?.status ?? (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof s === 'number' && Number.isInteger(s) && s >= 400 && s <= 599 ? s : 500;
}
