// Tachyon with the built-in metrics middleware (bench/servers/middleware-peers.mjs): the same
// server as tachyon.mjs, for pricing the middleware on http-realistic-get.
process.env.TACHYON_MIDDLEWARE = 'metrics';
await import('./tachyon.mjs');
