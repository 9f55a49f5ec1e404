// Log correlation: the active span's ids on log lines. The plugin makes the request's span
// active while its middleware, hooks and handler run (and their async continuations), so a
// logger that reads the active context at each line puts the ids on every line of the request:
// `req.log` lines and the framework's own (`request failed`, timeouts) alike.
import { context, trace, isSpanContextValid } from '@opentelemetry/api';
import type { Logger } from '@tachyon/server';

/** The ids OpenTelemetry's log data model names, as log fields. */
export interface TraceLogFields {
  trace_id: string;
  span_id: string;
  trace_flags: string;
}

/**
 * `{ trace_id, span_id, trace_flags }` of the active span, or `{}` outside one. Pino takes it
 * as is: `pino({ mixin: traceLogFields })`. A new object each call: pino merges the line's
 * fields into what a mixin returns.
 */
export function traceLogFields(): Partial<TraceLogFields> {
  const span = trace.getSpan(context.active());
  if (span === undefined) return {};
  const sc = span.spanContext();
  if (!isSpanContextValid(sc)) return {};
  return { trace_id: sc.traceId, span_id: sc.spanId, trace_flags: `0${sc.traceFlags.toString(16)}`.slice(-2) };
}

/**
 * Any Tachyon `Logger` whose lines carry the active span's ids (for loggers without a mixin:
 * `jsonLogger()`, `stderrLogger()`, your own): `new App({ logger: withTraceIds(jsonLogger()) })`.
 * Its `child()` (what `req.log` is made with) wraps the child the same way.
 */
export function withTraceIds(logger: Logger): Logger {
  if (typeof logger !== 'object' || logger === null || typeof logger.info !== 'function')
    throw new TypeError('withTraceIds(logger): logger must have error, warn, info and debug methods');
  const wrap =
    (name: 'error' | 'warn' | 'info' | 'debug') =>
    (obj: object | string, msg?: string): void => {
      const ids = traceLogFields();
      if (ids.trace_id === undefined) return logger[name](obj, msg);
      if (typeof obj === 'string') return logger[name]({ ...ids }, obj);
      logger[name]({ ...ids, ...obj }, msg);
    };
  const wrapped: Logger = { error: wrap('error'), warn: wrap('warn'), info: wrap('info'), debug: wrap('debug') };
  const child = logger.child;
  if (typeof child === 'function') wrapped.child = (bindings) => withTraceIds(child.call(logger, bindings));
  return wrapped;
}
