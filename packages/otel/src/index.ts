// @tachyon/otel: OpenTelemetry traces for Tachyon, on the public extension API only (hooks,
// middleware, decorations: docs/hooks.md, docs/plugins.md) and @opentelemetry/api.
//
//   await app.register(otel());                 // after the SDK is started (docs/otel.md)
//   app.get('/users/:id', (req) => { req.otel?.span.setAttribute('user.id', req.params.id); … });
import { definePlugin, type AppHooks, type Scope } from '@tachyon/server';
import { checkOptions, type OtelOptions } from './options.ts';
import { isRecordingTracer } from './noop.ts';
import { httpTracing, type RequestTrace } from './http.ts';
import { websocketTracing } from './websocket.ts';
import { messagingTracing } from './messaging.ts';

export { traceLogFields, withTraceIds, type TraceLogFields } from './logs.ts';
export { isRecordingTracer } from './noop.ts';
export type { OtelOptions } from './options.ts';
export type { RequestTrace } from './http.ts';

declare module '@tachyon/server' {
  interface RequestDecorations {
    /**
     * The request's span and context (`req.otel.span.setAttribute(…)`); null when the request
     * is not traced (`ignore`). Undefined when no tracer provider was registered: the plugin
     * then installs nothing.
     */
    otel: RequestTrace | null;
  }
}

/**
 * The plugin, with its options checked now. Global: it traces every route of the app it is
 * registered on. Register it first, so its context is active for the middleware and hooks
 * added after it.
 */
export function otel(options?: OtelOptions) {
  const { tracer, ignore, websocket, publishes } = checkOptions(options);
  return definePlugin({ name: '@tachyon/otel', global: true }, (scope: Scope<AppHooks>) => {
    // No tracer provider registered: nothing at all is installed (zero cost).
    if (!isRecordingTracer(tracer)) return;

    // Declared routes, as onRoute announces them: whether a user route is the catch-all
    // (else `/*` is the not-found answer, which has no http.route).
    let catchAll = false;
    scope.addHook('onRoute', (route) => {
      if (route.kind === 'http' && route.path === '/*') catchAll = true;
    });

    const http = httpTracing(tracer, ignore, (req) => catchAll || req.route !== '/*');
    scope.decorateRequest('otel', null);
    scope.addHook('onRequest', http.onRequest);
    scope.use(http.activate);
    scope.addHook('onError', http.onError);
    scope.addHook('onTimeout', http.onTimeout);
    scope.addHook('onAbort', http.onAbort);
    scope.addHook('onResponse', http.onResponse);

    if (websocket) {
      const ws = websocketTracing(tracer, ignore);
      scope.addHook('onUpgrade', ws.onUpgrade);
      scope.addHook('onUpgradeEnd', ws.onUpgradeEnd);
      scope.addHook('aroundEvent', ws.aroundEvent);
    }
    if (publishes) {
      const messaging = messagingTracing(tracer);
      scope.addHook('onPublish', messaging.onPublish);
      scope.addHook('onDeliver', messaging.onDeliver);
    }
  });
}
