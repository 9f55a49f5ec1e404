// Type tests for the built-in middleware (docs/cors.md … docs/metrics.md).
import {
  App,
  cors,
  health,
  metrics,
  rateLimit,
  secureHeaders,
  MemoryRateLimitStore,
  type AppView,
  type Middleware,
  type RateLimitStore,
} from '@tachyon/server';
import type { Registry } from 'prom-client';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_ok: T) => {};

const app = new App();
app.use(cors({ origin: [/* list */ 'https://a.example'], credentials: true, maxAge: 600 }));
app.use(cors({ origin: async (origin, req) => origin.endsWith('.example') && req.method !== 'DELETE' }));
app.use(cors({ origin: /^https:\/\/x\.example$/ }));
// @ts-expect-error: maxAge is a number of seconds
cors({ maxAge: '10m' });
app.use(
  secureHeaders({
    xFrameOptions: 'DENY',
    strictTransportSecurity: false,
    contentSecurityPolicy: { directives: { defaultSrc: ["'self'"], upgradeInsecureRequests: true } },
  }),
);
// @ts-expect-error: CSP needs directives
secureHeaders({ contentSecurityPolicy: { defaultSrc: ["'self'"] } });
const store: RateLimitStore = new MemoryRateLimitStore();
app.use(rateLimit({ window: 60_000, max: 100, store, key: (req) => req.ip }));
app.use(rateLimit({ window: 1000, max: 1, store: { increment: async () => ({ count: 1, resetAt: Date.now() }), reset: async () => {} } }));
// @ts-expect-error: window and max are required
rateLimit({ max: 1 });
app.use(health({ checks: { db: () => true, bus: async () => false } }));
// @ts-expect-error: a check returns a boolean
health({ checks: { db: () => 'up' } });
const m = metrics({ prefix: 'shop_' });
metrics({ clusterTimeout: 500 });
// @ts-expect-error: clusterTimeout is a number of milliseconds
metrics({ clusterTimeout: '1s' });
expectType<Equal<typeof m.registry, Registry>>(true);
const mw: Middleware = m;
app.use(mw);
app.get('/users/:id', (req) => {
  expectType<Equal<typeof req.route, string>>(true);
  expectType<Equal<typeof req.app, AppView>>(true);
  const draining: boolean = req.app.draining;
  // @ts-expect-error: read-only
  req.app.draining = true;
  return { draining, connections: req.app.connections };
});
