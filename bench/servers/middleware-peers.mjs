// The built-in middleware the tachyon-<middleware> peers add to bench/servers/tachyon.mjs,
// chosen by TACHYON_MIDDLEWARE (comma-separated): each configured as a production app would,
// so that `--peers tachyon,tachyon-cors,…` on http-realistic-get prices each one.
import { cors, metrics, rateLimit, secureHeaders } from '@tachyon/server';

const selected = new Set(process.env.TACHYON_MIDDLEWARE.split(','));
const known = ['cors', 'secure-headers', 'rate-limit', 'metrics', 'access-log', 'hooks', 'otel', 'otel-off'];
for (const m of selected)
  if (!known.includes(m)) throw new Error(`TACHYON_MIDDLEWARE: unknown middleware ${m} (known: ${known.join(', ')})`);

/** App options: request ids and an access log through pino, buffered to /dev/null (what a production app writing to a file or pipe pays, minus the disk). */
export async function appOptions(options) {
  if (!selected.has('access-log')) return options;
  const { pino } = await import('pino');
  const logger = pino(pino.destination({ dest: '/dev/null', sync: false, minLength: 4096 }));
  return { ...options, logger, requestId: true, accessLog: true };
}

// @tachyon/otel (tachyon-otel, tachyon-otel-off): loaded only for those peers. With `otel`, the
// SDK as NodeSDK would set it up (AsyncLocalStorage context, W3C propagation, a batch span
// processor), every request sampled, and an exporter that drops what it is given: the cost of
// making, timing and batching the spans, not of a network.
const otelPlugin = selected.has('otel') || selected.has('otel-off') ? await loadOtel(selected.has('otel')) : null;

async function loadOtel(sdk) {
  const { otel } = await import('@tachyon/otel');
  if (!sdk) return otel();
  const { context, propagation } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { W3CTraceContextPropagator } = await import('@opentelemetry/core');
  const { BatchSpanProcessor, TracerProvider } = await import('@opentelemetry/sdk-trace');
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const exporter = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} };
  return otel({ tracerProvider: new TracerProvider({ spanProcessors: [new BatchSpanProcessor({ exporter })] }) });
}

export function install(app) {
  // First, so its context is active for everything after it (docs/otel.md).
  if (otelPlugin !== null) app.register(otelPlugin);
  // Three no-op hooks (tachyon-hooks.mjs): what the hook machinery itself costs per request.
  if (selected.has('hooks')) {
    app.addHook('onRequest', () => {});
    app.addHook('preHandler', () => {});
    app.addHook('onResponse', () => {});
  }
  // metrics first, so it times everything after it (docs/metrics.md).
  if (selected.has('metrics')) app.use(metrics());
  if (selected.has('cors')) app.use(cors({ origin: ['https://app.example'], credentials: true }));
  if (selected.has('secure-headers')) app.use(secureHeaders());
  // One client address does all the load: a limit it never reaches, so every request pays
  // the counting and the RateLimit-* headers and none is refused.
  if (selected.has('rate-limit')) app.use(rateLimit({ window: 60_000, max: Number.MAX_SAFE_INTEGER }));
}
