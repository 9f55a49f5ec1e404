// The plugin's options, checked once at registration: a bad option is a clear TypeError then,
// never a surprise per request.
import { trace, type Tracer, type TracerProvider } from '@opentelemetry/api';
import type { Request } from '@tachyon/server';
import { checkKnownKeys } from '@tachyon/server/options-check';

export interface OtelOptions {
  /** The tracer spans are made with. Default: `tracerProvider`'s (else the global provider's) tracer named `@tachyon/otel`. */
  tracer?: Tracer;
  /** Where the default tracer comes from, when not the global provider (`trace.setGlobalTracerProvider`). */
  tracerProvider?: TracerProvider;
  /** Requests that get no span (health checks, metrics scrapes): `(req) => req.path === '/healthz'`. Called in onRequest. */
  ignore?: (req: Request) => boolean;
  /** Spans for WebSocket upgrades and events. Default true. */
  websocket?: boolean;
  /**
   * Spans for publishes (`send`) and for messages that arrive from other processes
   * (`process`), and trace context carried with each publish on the bus. Default true.
   */
  publishes?: boolean;
}

export interface CheckedOptions {
  tracer: Tracer;
  ignore: ((req: Request) => boolean) | null;
  websocket: boolean;
  publishes: boolean;
}

const KNOWN = ['tracer', 'tracerProvider', 'ignore', 'websocket', 'publishes'] as const;
export const TRACER_NAME = '@tachyon/otel';

export function checkOptions(options: unknown): CheckedOptions {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new TypeError(`otel(options): options must be an object, got ${options === null ? 'null' : typeof options}`);
  checkKnownKeys('otel()', options, KNOWN);
  const o = options as OtelOptions;
  if (o.tracer !== undefined && typeof (o.tracer as Partial<Tracer> | null)?.startSpan !== 'function')
    throw new TypeError('otel(): tracer must be an OpenTelemetry Tracer (with startSpan), e.g. trace.getTracer("my-app")');
  if (o.tracerProvider !== undefined && typeof (o.tracerProvider as Partial<TracerProvider> | null)?.getTracer !== 'function')
    throw new TypeError('otel(): tracerProvider must be an OpenTelemetry TracerProvider (with getTracer)');
  if (o.tracer !== undefined && o.tracerProvider !== undefined)
    throw new TypeError('otel(): give tracer or tracerProvider, not both (the tracer already belongs to a provider)');
  if (o.ignore !== undefined && typeof o.ignore !== 'function')
    throw new TypeError(`otel(): ignore must be a function (req) => boolean, got ${o.ignore === null ? 'null' : typeof o.ignore}`);
  for (const name of ['websocket', 'publishes'] as const)
    if (o[name] !== undefined && typeof o[name] !== 'boolean')
      throw new TypeError(`otel(): ${name} must be true or false, got ${JSON.stringify(o[name])}`);
  const tracer = o.tracer ?? (o.tracerProvider ?? trace.getTracerProvider()).getTracer(TRACER_NAME);
  return { tracer, ignore: o.ignore ?? null, websocket: o.websocket ?? true, publishes: o.publishes ?? true };
}
