// Type tests for route contracts: the route map an App or Router accumulates (for typed
// clients) and the replies a route with `response` schemas may return.
// Every @ts-expect-error line must be an error, or the compile fails.
import { App, Router, type RoutesOf, type Middleware } from '@tachyon/server';
import { z } from 'zod';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_ok: T) => {};

const User = z.object({ id: z.number(), name: z.string() });
const NotFound = z.object({ error: z.string() });
const Id = z.object({ id: z.coerce.number() });

// ----- accumulation -------------------------------------------------------------------------
const users = new Router()
  .get('/:id', { params: Id, response: { 200: User, 404: NotFound } }, (req, res) => {
    if (req.params.id === 0) {
      res.status(404);
      return { error: 'no such user' };
    }
    return { id: req.params.id, name: 'ada' };
  })
  .post('/', { body: User.omit({ id: true }), response: { 201: User } }, (req, res) => {
    res.status(201);
    return { id: 1, name: req.body.name };
  });

const app = new App()
  .get('/health', () => 'ok')
  .attach('/users', users)
  .put('/items/:id', { body: z.object({ n: z.number() }) }, (req) => req.body.n);

// The app keeps its class: App members stay callable after chaining.
app.listen satisfies App['listen'];
const asApp: App = app;
void asApp;

type Routes = RoutesOf<typeof app>;
expectType<Equal<keyof Routes, '/health' | '/users/:id' | '/users' | '/items/:id'>>(true);
expectType<Equal<keyof Routes['/users/:id'], 'get'>>(true);
expectType<Equal<keyof Routes['/users'], 'post'>>(true);
expectType<Equal<Routes['/users/:id']['get']['response'][200], typeof User>>(true);

// Two methods on one path merge.
const both = new Router().get('/x', () => 1).delete('/x', () => 2);
expectType<Equal<keyof RoutesOf<typeof both>['/x'], 'get' | 'delete'>>(true);

// A prefix of '/' or a route at '/' joins like the server does.
const root = new App().attach('/', users).attach(
  '/v1/',
  new Router().get('/', () => 1),
);
expectType<Equal<keyof RoutesOf<typeof root>, '/:id' | '/' | '/v1'>>(true);

// An untyped router (declared in statements) carries no routes; nothing breaks.
const plain = new Router();
plain.get('/a', () => 1);
expectType<Equal<RoutesOf<typeof plain>, {}>>(true);
const untypedApp = new App();
untypedApp.attach('/p', plain);

// A path only known at run time adds nothing.
const dynamic: string = '/d';
const dyn = new Router().get(dynamic, () => 1);
expectType<Equal<RoutesOf<typeof dyn>, {}>>(true);

// Subclasses keep their own members through chaining.
class MyApp extends App {
  hello(): string {
    return 'hi';
  }
}
const mine = new MyApp().get('/h', () => 1);
expectType<Equal<ReturnType<typeof mine.hello>, string>>(true);

// ----- typed replies --------------------------------------------------------------------------
new App().get('/u', { response: { 200: User } }, () => ({ id: 1, name: 'a' }));
new App().get('/u', { response: { 200: User } }, async () => ({ id: 1, name: 'a' }));
// Answering with res, or a web Response, is allowed.
new App().get('/u', { response: { 200: User } }, (req, res) => res.json({ id: 1, name: 'a' }));
new App().get('/u', { response: { 200: User } }, () => new Response('x'));
// @ts-expect-error: name must be a string
new App().get('/u', { response: { 200: User } }, () => ({ id: 1, name: 2 }));
// @ts-expect-error: missing name
new App().get('/u', { response: { 200: User } }, async () => ({ id: 1 }));
// @ts-expect-error: not a declared reply
new App().get('/u', { response: { 200: User, 404: NotFound } }, () => 'text');
// Strings and arrays when the schema says so.
new App().get('/t', { response: { 200: z.string() } }, () => 'text');
new App().get('/l', { response: { 200: z.array(User), '4XX': NotFound, default: NotFound } }, () => [{ id: 1, name: 'a' }]);

// res.json takes a declared reply; after res.status(code), that status's reply.
new App().get('/r', { response: { 200: User, 404: NotFound, '5XX': NotFound } }, (req, res) => {
  res.json({ id: 1, name: 'a' });
  res.json({ error: 'either declared reply, when the status is not in the expression' });
  res.status(404).json({ error: 'x' });
  res.status(200).header('x', 'y').json({ id: 1, name: 'a' });
  res.status(503).json({ error: 'by class' });
  res.status(302).json({ anything: 'a status no schema covers is not checked' });
  const code: number = 200;
  res.status(code).json('a status known only at run time is not checked');
  // @ts-expect-error: a 404 body is a NotFound
  res.status(404).json({ id: 1, name: 'a' });
  // @ts-expect-error: a 200 body is a User
  res.status(200).json({ error: 'x' });
  // @ts-expect-error: by class: a 5XX body is a NotFound
  res.status(500).json({ id: 1 });
  // @ts-expect-error: not a declared reply at all
  res.json({ nope: true });
});
// Statuses written as string keys work the same.
new App().get('/s', { response: { '201': User } }, (req, res) => {
  res.status(201).json({ id: 1, name: 'a' });
  // @ts-expect-error: a 201 body is a User
  res.status(201).json({ id: 'x' });
});
// The typed res is still a Response (helpers taking one accept it).
const helper = (res: import('@tachyon/server').Response) => res.status(204).end();
new App().get('/h', { response: { 200: User } }, (req, res) => helper(res));

// Route middleware before the handler stays free (any return).
const auth: Middleware = (req, res, next) => next();
new App().get('/m', { response: { 200: User } }, auth, (req) => ({ id: Number(req.params && 1), name: 'a' }));
new App().get('/m', { response: { 200: User } }, auth, auth, () => ({ id: 1, name: 'a' }));
// @ts-expect-error: the last handler must reply with a User
new App().get('/m', { response: { 200: User } }, auth, () => ({ id: '1' }));

// Without `response`, handlers return anything (as before).
new App().get('/free', {}, () => Symbol('anything'));

// this-returning members (use, error, addHook) keep the routes so far; chaining goes on.
const mw: Middleware = (req, res, next) => next();
const chained = new App()
  .get('/a', () => 1)
  .use(mw)
  .error(() => undefined)
  .addHook('onRequest', () => {})
  .post('/b', () => 2);
expectType<Equal<keyof RoutesOf<typeof chained>, '/a' | '/b'>>(true);
