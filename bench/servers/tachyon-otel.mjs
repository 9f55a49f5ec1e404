// Tachyon with @tachyon/otel and the OpenTelemetry SDK on (see middleware-peers.mjs): the same
// server as tachyon.mjs, every request traced (sampled, a batch processor, an exporter that
// drops the batches), for pricing the spans on http-realistic-get (docs/otel.md, "Cost").
process.env.TACHYON_MIDDLEWARE = 'otel';
await import('./tachyon.mjs');
