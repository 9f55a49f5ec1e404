// Tachyon with the built-in cors middleware (bench/servers/middleware-peers.mjs): the same
// server as tachyon.mjs, for pricing the middleware on http-realistic-get.
process.env.TACHYON_MIDDLEWARE = 'cors';
await import('./tachyon.mjs');
