// Tachyon with three no-op app-wide hooks (onRequest, preHandler, onResponse; see
// middleware-peers.mjs): the same server as tachyon.mjs, for pricing the hook machinery on
// http-realistic-get (target: at most +5% over `tachyon`; docs/hooks.md, "Cost").
process.env.TACHYON_MIDDLEWARE = 'hooks';
await import('./tachyon.mjs');
