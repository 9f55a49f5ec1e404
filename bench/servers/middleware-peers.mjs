// The built-in middleware the tachyon-<middleware> peers add to bench/servers/tachyon.mjs,
// chosen by TACHYON_MIDDLEWARE (comma-separated): each configured as a production app would,
// so that `--peers tachyon,tachyon-cors,…` on http-realistic-get prices each one.
import { cors, metrics, rateLimit, secureHeaders } from '@tachyon/server';

const selected = new Set(process.env.TACHYON_MIDDLEWARE.split(','));
const known = ['cors', 'secure-headers', 'rate-limit', 'metrics', 'access-log', 'hooks'];
for (const m of selected)
  if (!known.includes(m)) throw new Error(`TACHYON_MIDDLEWARE: unknown middleware ${m} (known: ${known.join(', ')})`);

/** App options: request ids and an access log through pino, buffered to /dev/null (what a production app writing to a file or pipe pays, minus the disk). */
export async function appOptions(options) {
  if (!selected.has('access-log')) return options;
  const { pino } = await import('pino');
  const logger = pino(pino.destination({ dest: '/dev/null', sync: false, minLength: 4096 }));
  return { ...options, logger, requestId: true, accessLog: true };
}

export function install(app) {
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
