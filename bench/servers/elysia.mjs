// Elysia on Bun, validating with its own schema builder (`t`, TypeBox compiled ahead of time).
// Elysia answers validation failures with 422 by default; onError maps them to 400 like the
// other peers.
import { Elysia, t } from 'elysia';
import { EMAIL_PATTERN, ROLES, createdBody, userBody, portFromEnv, ready } from './shared.mjs';

const port = portFromEnv();

// The one middleware, as a route-level beforeHandle hook.
const mw = ({ set }) => {
  set.headers['x-mw'] = '1';
};

const UserCreate = t.Object({
  name: t.String({ minLength: 1, maxLength: 100 }),
  email: t.String({ pattern: EMAIL_PATTERN }),
  age: t.Integer({ minimum: 0, maximum: 150 }),
  roles: t.Array(t.UnionEnum(ROLES), { maxItems: 10 }),
  tags: t.Array(t.String({ minLength: 1, maxLength: 32 }), { maxItems: 20 }),
  bio: t.String({ maxLength: 2000 }),
});

const app = new Elysia()
  .onError(({ code, set }) => {
    if (code === 'VALIDATION' || code === 'PARSE') {
      set.status = 400;
      return { error: 'Bad Request' };
    }
  })
  .get('/', () => new Response())
  .get('/mw', () => new Response(), { beforeHandle: mw })
  .get('/users/:id', ({ params, query }) => userBody(params.id, query.fields), {
    beforeHandle: mw,
    params: t.Object({ id: t.Numeric({ minimum: 1, multipleOf: 1 }) }),
    query: t.Object({ fields: t.Optional(t.String()) }),
  })
  .post(
    '/users',
    ({ body, set }) => {
      set.status = 201;
      return createdBody(body);
    },
    { beforeHandle: mw, body: UserCreate, parse: 'application/json' },
  );

app.listen({ port, hostname: '127.0.0.1' }, (server) => ready(server.port));
