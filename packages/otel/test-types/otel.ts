// Types of @tachyon/otel as an app sees them: the plugin on the app, req.otel typed through the
// module augmentation, the log helpers, and options refused at compile time.
import { App, jsonLogger, type Logger } from '@tachyon/server';
import { trace, type Span } from '@opentelemetry/api';
import { otel, traceLogFields, withTraceIds, type OtelOptions, type RequestTrace, type TraceLogFields } from '@tachyon/otel';

const app = new App({ logger: withTraceIds(jsonLogger()) });
await app.register(otel());
await app.register(otel({ tracer: trace.getTracer('x'), ignore: (req) => req.path === '/healthz', websocket: false }));
await app.register(otel({ tracerProvider: trace.getTracerProvider() }));

app.get('/users/:id', (req) => {
  const t: RequestTrace | null = req.otel;
  void t;
  const span: Span | undefined = req.otel?.span;
  span?.setAttribute('user.id', req.params.id);
  return { id: req.params.id };
});

const fields: Partial<TraceLogFields> = traceLogFields();
const traceId: string | undefined = fields.trace_id;
const logger: Logger = withTraceIds(jsonLogger());
const options: OtelOptions = { websocket: true, publishes: false };
// @ts-expect-error publishes is a boolean
otel({ publishes: 'yes' });

// @ts-expect-error unknown option
otel({ tracr: trace.getTracer('x') });
// @ts-expect-error ignore is a function of the request
otel({ ignore: '/healthz' });

void [traceId, logger, options];
export type { Span };
