// Tachyon with the built-in rate-limit middleware (bench/servers/middleware-peers.mjs): the same
// server as tachyon.mjs, for pricing the middleware on http-realistic-get.
process.env.TACHYON_MIDDLEWARE = 'rate-limit';
await import('./tachyon.mjs');
