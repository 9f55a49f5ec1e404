// Tachyon with @tachyon/otel registered and no tracer provider (see middleware-peers.mjs):
// the plugin must install nothing, so this peer should measure as `tachyon` (docs/otel.md, "Cost").
process.env.TACHYON_MIDDLEWARE = 'otel-off';
await import('./tachyon.mjs');
