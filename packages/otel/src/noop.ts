// Is anything listening? With no tracer provider registered, @opentelemetry/api hands out a
// no-op tracer whose spans carry an invalid (all-zero) span context. The plugin asks once, at
// registration, and installs nothing at all when that is so: no hooks, no decorations, no
// middleware, so the app runs exactly as without the plugin.
import { ROOT_CONTEXT, isSpanContextValid, type Tracer } from '@opentelemetry/api';

/**
 * True when `tracer` makes real spans. A sampler that samples nothing still gives valid
 * contexts (they propagate), so it counts as real. The probe span is never ended: an SDK
 * exports spans only when they end, so it is dropped unseen.
 */
export function isRecordingTracer(tracer: Tracer): boolean {
  const probe = tracer.startSpan('tachyon.otel.probe', undefined, ROOT_CONTEXT);
  return isSpanContextValid(probe.spanContext());
}
