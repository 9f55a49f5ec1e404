// Tachyon with the built-in secure-headers middleware (bench/servers/middleware-peers.mjs): the same
// server as tachyon.mjs, for pricing the middleware on http-realistic-get.
process.env.TACHYON_MIDDLEWARE = 'secure-headers';
await import('./tachyon.mjs');
