// Type tests for the request a handler sees: query without a schema, bodies, headers and
// cookies from schemas, Request as an annotation, shared middleware in typed chains.
// Every @ts-expect-error line must be an error, or the compile fails.
import { App, HttpError, ValidationError, type Middleware, type Request } from '@tachyon/server';
import * as v from 'valibot';
import { z } from 'zod';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_ok: T) => {};

const app = new App();
const requireAdmin: Middleware = async (req, res, next) => {
  if (req.header('x-admin') !== '1') throw new HttpError(403, 'admins only');
  await next();
};

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
    expectType<Equal<(typeof req.headers)['x-key'], string>>(true);
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

// Request is usable as an annotation.
function describeRequest(req: Request<{ params: { id: string } }>): string {
  return `${req.method} ${req.path} ${req.params.id}`;
}
void describeRequest;

const err = new ValidationError('body', [{ path: ['a'], message: 'bad' }]);
expectType<Equal<typeof err.status, number>>(true);

// A shared, untyped middleware fits into any typed route's chain (Request<T> is covariant).
app.get('/shared-mw/:id', { params: z.object({ id: z.coerce.number() }) }, requireAdmin, (req) => {
  expectType<Equal<typeof req.params.id, number>>(true);
  return req.params.id;
});

// req.bodyError: why reading the body stopped, or null.
app.post('/body-error', (req) => {
  expectType<Equal<typeof req.bodyError, Error | null>>(true);
  return null;
});
