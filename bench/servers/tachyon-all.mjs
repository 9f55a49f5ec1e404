// Tachyon with every built-in middleware at once (metrics, cors, secureHeaders, rateLimit,
// request ids and the access log): bench/servers/middleware-peers.mjs.
process.env.TACHYON_MIDDLEWARE = 'metrics,cors,secure-headers,rate-limit,access-log';
await import('./tachyon.mjs');
