// Type tests for routes: params from the path, schemas replacing them, route options,
// middleware and routers, the server handle, serving options, the route table.
// Compiled by `tsc -p packages/server/test-types` in `npm test`, against the published
// declarations. Every @ts-expect-error line must be an error, or the compile fails.
import {
  App,
  HttpError,
  Router,
  lightResponses,
  sendLightResponse,
  toWebRequest,
  type HttpRouteInfo,
  type Middleware,
  type Next,
  type RouteInfo,
  type WebRequestOptions,
} from '@tachyon/server';
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
app.get('/users/:id', { params: z.object({ id: z.coerce.number().int() }), query: z.object({ fields: z.string().optional() }) }, (req) => {
  expectType<Equal<typeof req.params.id, number>>(true);
  expectType<Equal<typeof req.query.fields, string | undefined>>(true);
  // @ts-expect-error: id is a number now
  req.params.id.toUpperCase();
  // @ts-expect-error: not in the query schema
  req.query.limit;
  return { id: req.params.id };
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

const server = await app.listen(0);
expectType<Equal<typeof server.port, number>>(true);
await server.close({ timeout: 1000 });
await server.close({ restart: true }); // WebSockets get 1012 instead of 1001
// @ts-expect-error: restart is a boolean
await server.close({ restart: 1012 });
// @ts-expect-error: close takes an options object
await server.close(5);

// Route options for serving.
app.get('/cached', { dedup: true, compress: { threshold: 512 } }, () => 'x');
// @ts-expect-error: dedup is a boolean
app.get('/cached2', { dedup: 'yes' }, () => 'x');
app.mount('/svelte', async (request, ctx) => new Response(`${request.method} ${ctx.ip}`), { dedup: true, stripPrefix: true });
app.mount('/proxy', (request) => fetch(new Request(request)), { realRequest: true });
// @ts-expect-error: realRequest is a boolean
app.mount('/proxy2', (request) => fetch(request), { realRequest: 'yes' });
app.mount('/undici', () => new Response('x'), { lightResponses: false });
// @ts-expect-error: lightResponses is a boolean
app.mount('/undici2', () => new Response('x'), { lightResponses: 'no' });
app.get('/web', (req) => {
  const light: Request = toWebRequest(req, '', 'https://example.com');
  const real: Request = toWebRequest(req, '', undefined, { real: true } satisfies WebRequestOptions);
  // @ts-expect-error: real is a boolean
  toWebRequest(req, '', undefined, { real: 1 });
  return [light.url, real.url];
});
// The light Response: a process-wide switch, and the direct write for code that calls a fetch handler itself.
lightResponses();
lightResponses(false);
// @ts-expect-error: on is a boolean
lightResponses('on');
app.get('/web-response', async (req, res) => {
  const response = await fetch('https://example.com');
  const sent: boolean = sendLightResponse(response, res);
  // @ts-expect-error: a web Response, not a string
  sendLightResponse('hello', res);
  return sent ? undefined : response;
});

// The route table is read-only data, discriminated by kind.
const table: RouteInfo[] = app.routes();
for (const r of table) {
  if (r.kind === 'http') {
    expectType<Equal<typeof r, HttpRouteInfo>>(true);
    // @ts-expect-error: read-only
    r.path = '/x';
  } else if (r.kind === 'mount' || r.kind === 'static') {
    expectType<Equal<typeof r.prefix, string>>(true);
  }
}

// res.stream(): what a graceful shutdown does to it.
declare const chunks: AsyncIterable<string>;
app.get('/download', async (_req, res) => {
  await res.stream(chunks, { shutdown: 'finish' });
  await res.stream(chunks, { length: 1, shutdown: 'end' });
  // @ts-expect-error: 'end' or 'finish'
  await res.stream(chunks, { shutdown: 'wait' });
});

// serialize: 'compiled' takes the route's response schemas; other values do not compile.
app.get('/compiled', { response: { 200: z.object({ ok: z.boolean() }) }, serialize: 'compiled' }, () => ({ ok: true }));
// @ts-expect-error: 'fast' is not a serializer
app.get('/not-a-serializer', { response: { 200: z.object({ ok: z.boolean() }) }, serialize: 'fast' }, () => ({ ok: true }));
