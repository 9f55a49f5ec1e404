// Tachyon with the built-in access-log middleware (bench/servers/middleware-peers.mjs): the same
// server as tachyon.mjs, for pricing the middleware on http-realistic-get.
process.env.TACHYON_MIDDLEWARE = 'access-log';
await import('./tachyon.mjs');
