// Type tests: compiled by `tsc --noEmit` in `npm test`, against the published declarations.
// Every @ts-expect-error line must be an error, or the compile fails.
import { App, HttpError, Router, ValidationError, type Request, type Middleware, type Next } from '@tachyon/server';
import * as v from 'valibot';
import { z } from 'zod';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_ok: T) => {};

const app = new App({ bodyLimit: 1 << 20, cookieSecret: ['new-secret', 'old-secret'] });

// Params come from the path string when there is no schema.
app.get('/users/:id/posts/:postId', (req) => {
  expectType<Equal<typeof req.params, { id: string; postId: string }>>(true);
  // @ts-expect-error: no such param in the path
  req.params.idd;
  return req.params.id.toUpperCase();
});
app.get('/files/*', (req) => {
  expectType<Equal<typeof req.params, { '*': string }>>(true);
});

// A schema replaces the path-derived type with its output type.
app.get(
  '/users/:id',
  { params: z.object({ id: z.coerce.number().int() }), query: z.object({ fields: z.string().optional() }) },
  (req) => {
    expectType<Equal<typeof req.params.id, number>>(true);
    expectType<Equal<typeof req.query.fields, string | undefined>>(true);
    // @ts-expect-error: id is a number now
    req.params.id.toUpperCase();
    // @ts-expect-error: not in the query schema
    req.query.limit;
    return { id: req.params.id };
  },
);

// Without a query schema the query is a prototype-free record of strings or string arrays.
app.get('/search', (req) => {
  expectType<Equal<NonNullable<typeof req.query.anything>, string | string[]>>(true);
  // @ts-expect-error: no body without a body schema
  req.body.name;
});

app.post('/users', { body: z.object({ name: z.string().min(1), age: z.number().optional() }) }, async (req, res) => {
  expectType<Equal<typeof req.body, { name: string; age?: number | undefined }>>(true);
  // @ts-expect-error: misspelled property
  req.body.nmae;
  res.status(201).json({ name: req.body.name });
});

// Route middleware sees the route's types; per-route chains of several handlers.
app.get(
  '/typed-mw/:slug',
  { headers: z.object({ 'x-key': z.string() }), cookies: z.object({ sid: z.string() }) },
  (req, res, next) => {
    expectType<Equal<typeof req.headers['x-key'], string>>(true);
    expectType<Equal<typeof req.cookies.sid, string>>(true);
    expectType<Equal<typeof req.params.slug, string>>(true);
    return next();
  },
  (req) => req.cookies.sid,
);

// Any Standard Schema validator infers too.
app.post('/v/:n', { params: v.object({ n: v.pipe(v.string(), v.transform(Number)) }), body: v.object({ t: v.string() }) }, (req) => {
  expectType<Equal<typeof req.params.n, number>>(true);
  expectType<Equal<typeof req.body.t, string>>(true);
});

// Middleware and next.
const requireAdmin: Middleware = async (req, res, next) => {
  const n: Next = next;
  if (req.header('x-admin') !== '1') throw new HttpError(403, 'admins only');
  await n();
};
app.use(requireAdmin);
app.use('/admin', requireAdmin, requireAdmin);
// @ts-expect-error: middleware must be a function
app.use('/admin', 42);

const api = new Router();
api.get('/items/*', {}, (req, res) => res.send('wild'));
app.attach('/api', api);
app.error((err, req, res) => res.status(err.status ?? 500).json({ error: err.message }));
app.notFound((req, res) => res.status(404).json({ error: 'not found' }));

// @ts-expect-error: options must be an object of known keys, not a number
app.get('/bad', 5, () => 1);
// @ts-expect-error: unknown option
app.get('/bad2', { bodyLimt: 5 }, () => 1);

// Request is usable as an annotation.
function describeRequest(req: Request<{ params: { id: string } }>): string {
  return `${req.method} ${req.path} ${req.params.id}`;
}
void describeRequest;

const err = new ValidationError('body', [{ path: ['a'], message: 'bad' }]);
expectType<Equal<typeof err.status, number>>(true);

const server = await app.listen(0);
expectType<Equal<typeof server.port, number>>(true);
await server.close({ timeout: 1000 });
// @ts-expect-error: close takes an options object
await server.close(5);

// A shared, untyped middleware fits into any typed route's chain (Request<T> is covariant).
app.get('/shared-mw/:id', { params: z.object({ id: z.coerce.number() }) }, requireAdmin, (req) => {
  expectType<Equal<typeof req.params.id, number>>(true);
  return req.params.id;
});
// Route options for serving.
app.get('/cached', { dedup: true, compress: { threshold: 512 } }, () => 'x');
// @ts-expect-error: dedup is a boolean
app.get('/cached2', { dedup: 'yes' }, () => 'x');
app.mount('/svelte', async (request, ctx) => new Response(`${request.method} ${ctx.ip}`), { dedup: true, stripPrefix: true });

// WebSocket routes: ws.data from upgrade(), event data from each event's schema.
app.ws('/live', {
  upgrade: async (req) => (req.header('x-user') ? { id: 1, name: 'ada' } : false),
  open(ws) {
    expectType<Equal<typeof ws.data, { id: number; name: string }>>(true);
    // @ts-expect-error: not in the upgrade result
    ws.data.role;
  },
  events: {
    'chat:send': {
      schema: z.object({ room: z.string(), text: z.string().max(500) }),
      handler(ws, msg) {
        expectType<Equal<typeof msg, { room: string; text: string }>>(true);
        // @ts-expect-error: misspelled field
        msg.txt;
        return { ok: true };
      },
    },
    ping: { handler: (ws, data) => expectType<Equal<typeof data, unknown>>(true) },
  },
  message(ws, data, isBinary) {
    expectType<Equal<typeof data, ArrayBuffer>>(true);
    expectType<Equal<typeof isBinary, boolean>>(true);
  },
});
// @ts-expect-error: idleTimeout is a number
app.ws('/bad', { idleTimeout: '5' });
app.publish('room:1', 'chat', { text: 'hi' });
const subs: number = app.subscribers('room:1');
void subs;
