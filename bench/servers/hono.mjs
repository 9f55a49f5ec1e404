// Hono on @hono/node-server, validating with Hono's built-in `validator` middleware (the
// same zod schemas inside it).
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { validator } from 'hono/validator';
import { Params, Query, UserCreate, createdBody, userBody, portFromEnv, ready } from './shared.mjs';

const port = portFromEnv();
const app = new Hono();

const mw = async (c, next) => {
  c.header('x-mw', '1');
  await next();
};

const bad = (c) => c.json({ error: 'Bad Request' }, 400);
const check = (schema) => (value, c) => {
  const r = schema.safeParse(value);
  return r.success ? r.data : bad(c);
};

app.get('/', (c) => c.body(null, 200));

app.get('/mw', mw, (c) => c.body(null, 200));

app.get('/users/:id', mw, validator('param', check(Params)), validator('query', check(Query)), (c) => {
  const { id } = c.req.valid('param');
  const { fields } = c.req.valid('query');
  return c.json(userBody(id, fields));
});

app.post('/users', mw, validator('json', check(UserCreate)), (c) => c.json(createdBody(c.req.valid('json')), 201));

const server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, (info) => ready(info.port));
server.on('error', (err) => {
  console.error(`hono: failed to listen on 127.0.0.1:${port}: ${err.message}`);
  process.exit(1);
});
