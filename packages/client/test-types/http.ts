// Type tests for @tachyon/client/http: calls typed from the app's type, no code generation.
// Compiled by `tsc -p packages/client/test-types` against the built declarations (server and
// client). Every @ts-expect-error line must be an error, or the compile fails.
import { App, Router } from '@tachyon/server';
import { z } from 'zod';
import { client, type HttpClient } from '../dist/http.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_ok: T) => {};

const User = z.object({ id: z.number(), name: z.string() });
const NotFound = z.object({ error: z.string() });
type User = z.infer<typeof User>;

const users = new Router()
  .get(
    '/:id',
    {
      params: z.object({ id: z.coerce.number() }),
      query: z.object({ fields: z.string().optional() }),
      response: { 200: User, 404: NotFound },
    },
    (req) => ({ id: req.params.id, name: 'ada' }),
  )
  .post('/', { body: z.object({ name: z.string() }), response: { 201: User, '4XX': NotFound } }, (req, res) => {
    res.status(201);
    return { id: 1, name: req.body.name };
  })
  .delete('/:id', (req) => req.params.id);

const app = new App()
  .get('/health', () => 'ok')
  .get('/search', { query: z.object({ q: z.string(), tag: z.array(z.string()).optional() }) }, () => [])
  .get('/files/*', (req) => req.params['*'])
  .put('/items/:slug', { body: z.object({ n: z.number() }), response: { 200: z.object({ n: z.number() }), default: NotFound } }, (req) => ({
    n: req.body.n,
  }))
  .patch('/opt', { body: z.object({ n: z.number() }).optional() }, () => 1)
  .any('/anything', () => 1)
  .attach('/users', users);

const api = client<typeof app>('http://localhost:3000', { headers: { authorization: 'Bearer x' } });

// ----- paths, params, query, body ---------------------------------------------------------------
const one = await api.get('/users/:id', { params: { id: 1 }, query: { fields: 'a' } });
await api.get('/users/:id', { params: { id: '1' } });
// @ts-expect-error: not a route
await api.get('/user/:id', { params: { id: 1 } });
// @ts-expect-error: params are required on a path with params
await api.get('/users/:id');
// @ts-expect-error: wrong param name
await api.get('/users/:id', { params: { uid: 1 } });
// @ts-expect-error: fields is a string
await api.get('/users/:id', { params: { id: 1 }, query: { fields: 2 } });
// @ts-expect-error: GET /users is not declared (only POST)
await api.get('/users');

// Without a params schema, params come from the path (strings or numbers).
await api.put('/items/:slug', { params: { slug: 'a b' }, body: { n: 1 } });
// @ts-expect-error: an object is no param value
await api.put('/items/:slug', { params: { slug: {} }, body: { n: 1 } });
// @ts-expect-error: body.n is a number
await api.put('/items/:slug', { params: { slug: 'x' }, body: { n: '1' } });
// @ts-expect-error: body is required
await api.put('/items/:slug', { params: { slug: 'x' } });
await api.get('/files/*', { params: { '*': 'a/b.txt' } });

// A required query field makes the init required.
await api.get('/search', { query: { q: 'x', tag: ['a', 'b'] } });
// @ts-expect-error: q is required
await api.get('/search', { query: {} });
// @ts-expect-error: the init is required (query.q)
await api.get('/search');

await api.post('/users', { body: { name: 'ada' } });
// @ts-expect-error: name is missing
await api.post('/users', { body: {} });
// @ts-expect-error: POST /users/:id is not declared
await api.post('/users/:id', { params: { id: 1 } });
await api.delete('/users/:id', { params: { id: 3 } });
await api.get('/health');
await api.patch('/opt');
// `any` answers every method.
await api.get('/anything');
await api.post('/anything', { body: { free: true } });

// ----- replies: data by status ------------------------------------------------------------------
if (one.status === 200) expectType<Equal<typeof one.data, User>>(true);
else expectType<Equal<typeof one.data, { error: string }>>(true);
if (one.ok) expectType<Equal<typeof one.data, User>>(true);
expectType<Equal<typeof one.status, 200 | 404>>(true);

const created = await api.post('/users', { body: { name: 'x' } });
if (created.ok) {
  expectType<Equal<typeof created.status, 201>>(true);
  expectType<Equal<typeof created.data, User>>(true);
} else expectType<Equal<typeof created.data, { error: string }>>(true);

const health = await api.get('/health');
expectType<Equal<typeof health.data, unknown>>(true);
expectType<Equal<typeof health.headers, Headers>>(true);

// ----- options ----------------------------------------------------------------------------------
client<typeof app>('', { fetch: globalThis.fetch, headers: () => ({ 'x-token': 'y' }), init: { credentials: 'include' } });
// @ts-expect-error: headers are strings
client<typeof app>('', { headers: { n: 1 } });

// An untyped app: no paths at all.
const untyped: HttpClient<App> = client<App>('http://x');
// @ts-expect-error: the untyped App declares no routes
await untyped.get('/health');
