// Type tests for hooks, plugins and decorators (docs/hooks.md, docs/plugins.md).
import {
  App,
  definePlugin,
  HttpError,
  type Plugin,
  type Request,
  type Response,
  type ResponseInfo,
  type RouteInfo,
  type Scope,
  type Socket,
  type UpgradeOutcome,
  type BusMeta,
  type EventOutcome,
  type EventOutcomeCode,
  type PublishInfo,
} from '@tachyon/server';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_ok: T) => {};

interface User {
  id: string;
}

// Decorations are typed by module augmentation.
declare module '@tachyon/server' {
  interface RequestDecorations {
    user: User | null;
    isAdmin(this: Request): boolean;
  }
  interface ReplyDecorations {
    sent: number;
  }
  interface AppDecorations {
    db: { query(sql: string): Promise<unknown[]> };
  }
}

const app = new App();

// Hooks: names and signatures are checked.
app.addHook('onRequest', (req, res) => {
  expectType<Equal<typeof req, Request>>(true);
  expectType<Equal<typeof res, Response>>(true);
});
app.addHook('preHandler', async (req) => {
  if (req.user === null) throw new HttpError(401);
});
app.addHook('onSend', (_req, _res, payload) => (typeof payload === 'string' ? payload.toUpperCase() : undefined));
app.addHook('onResponse', (_req, _res, info) => {
  expectType<Equal<typeof info, ResponseInfo>>(true);
  expectType<Equal<typeof info.duration, number>>(true);
});
app.addHook('onError', (err) => void err);
app.addHook('onRoute', (route) => {
  expectType<Equal<typeof route, RouteInfo>>(true);
});
app.addHook('onListen', ({ port }) => void port.toFixed());
app.addHook('onBeforeListen', ({ host, port }) => {
  expectType<Equal<typeof host, string>>(true);
  expectType<Equal<typeof port, number>>(true);
  if (host === '0.0.0.0') throw new Error('loopback only');
});
app.addHook('onBeforeListen', async () => {});
// @ts-expect-error the address is one argument
app.addHook('onBeforeListen', (_host: string, _port: number) => {});
app.addHook('onEvent', (ws, event, data) => {
  expectType<Equal<typeof ws, Socket<any>>>(true);
  expectType<Equal<typeof event, string>>(true);
  return data !== null;
});
app.addHook('aroundEvent', async (ws, event, run) => {
  expectType<Equal<typeof ws, Socket<any>>>(true);
  const outcome = await run();
  expectType<Equal<typeof outcome, EventOutcome>>(true);
  expectType<Equal<typeof outcome.code, EventOutcomeCode>>(true);
  expectType<Equal<typeof outcome.error, unknown>>(true);
  return event;
});
app.addHook('onUpgradeEnd', (req, outcome) => {
  expectType<Equal<typeof req, Request>>(true);
  expectType<Equal<typeof outcome, UpgradeOutcome>>(true);
  expectType<Equal<typeof outcome.status, number>>(true);
  expectType<Equal<typeof outcome.socket, Socket<any> | null>>(true);
  expectType<Equal<typeof outcome.socket extends infer S ? (S extends Socket<any> ? S['route'] : never) : never, string>>(true);
  // @ts-expect-error: the outcome is read-only
  outcome.status = 200;
});
app.addHook('onPublish', (topic, info) => {
  expectType<Equal<typeof info, PublishInfo>>(true);
  expectType<Equal<typeof info.event, string | null>>(true);
  return info.distributed ? { traceparent: topic } : undefined;
});
app.addHook('onPublish', (topic) => void topic); // observing only: no metadata
// @ts-expect-error: metadata values are strings
app.addHook('onPublish', () => ({ n: 1 }));
app.addHook('onDeliver', (topic, meta) => {
  expectType<Equal<typeof meta, Readonly<BusMeta>>>(true);
  return meta.traceparent ?? topic;
});
const code: EventOutcomeCode = 'RATE_LIMITED';
// @ts-expect-error: not an outcome code
const wrong: EventOutcomeCode = 'TIMEOUT';
void [code, wrong];
// @ts-expect-error: unknown hook name
app.addHook('onBegin', () => {});
// @ts-expect-error: onResponse's third argument is the ResponseInfo, not a string
app.addHook('onResponse', (_req: Request, _res: Response, info: string) => info);

// Route hooks.
app.get('/me', { hooks: { preHandler: [(req) => void req.user] } }, (req) => req.user);
// @ts-expect-error: route hooks are the HTTP hooks
app.get('/x', { hooks: { onOpen: () => {} } }, () => 'x');
app.ws('/live', { hooks: { onEvent: () => true, aroundEvent: (_ws, _event, run) => run() } });

// Decorators: declared names and value types only.
app.decorateRequest('user', null);
app.decorateRequest('isAdmin', function (this: Request) {
  return this.user?.id === 'admin';
});
app.decorateReply('sent', 0);
// @ts-expect-error: not declared in RequestDecorations
app.decorateRequest('session', null);
// @ts-expect-error: user is User | null
app.decorateRequest('user', 'nobody');
app.decorate('db', { query: async () => [] });
app.get('/admin', (req, res) => {
  expectType<Equal<typeof req.user, User | null>>(true);
  expectType<Equal<typeof res.sent, number>>(true);
  return req.isAdmin();
});

// Plugins: options are inferred from the plugin.
const auth: Plugin<{ header: string }> = (scope, options) => {
  expectType<Equal<typeof options.header, string>>(true);
  scope.addHook('preHandler', (req) => void req.header(options.header));
  scope.get('/who', (req) => req.user);
  expectType<Equal<typeof scope.db, { query(sql: string): Promise<unknown[]> }>>(true);
};
await app.register(auth, { prefix: '/auth', header: 'x-key' });
// @ts-expect-error: the plugin needs its header option
await app.register(auth, { prefix: '/auth' });
const named = definePlugin({ name: 'named', dependencies: ['other'] }, async (scope: Scope, options: { level: number }) => {
  scope.get('/level', () => options.level);
});
await app.register(named, { level: 1 });
// @ts-expect-error: level is a number
await app.register(named, { level: 'high' });
// @ts-expect-error: meta has name, dependencies and global
definePlugin({ label: 'x' }, () => {});
