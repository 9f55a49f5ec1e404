// Fastify 5 peer, validating with its own JSON Schema support (Ajv), and @fastify/static for
// the static scenarios.
import Fastify from 'fastify';
import { createdBody, userBody, userCreateJsonSchema, portFromEnv, ready } from './shared.mjs';

const port = portFromEnv();
const app = Fastify({ logger: false, bodyLimit: 1 << 20 });

// The one middleware, as a route-level onRequest hook.
const mw = (req, reply, done) => {
  reply.header('x-mw', '1');
  done();
};

app.get('/', (req, reply) => {
  reply.send();
});

app.get('/mw', { onRequest: mw }, (req, reply) => {
  reply.send();
});

app.get(
  '/users/:id',
  {
    onRequest: mw,
    schema: {
      params: { type: 'object', required: ['id'], properties: { id: { type: 'integer', minimum: 1 } } },
      querystring: { type: 'object', properties: { fields: { type: 'string' } } },
    },
  },
  (req) => userBody(req.params.id, req.query.fields),
);

app.post('/users', { onRequest: mw, schema: { body: userCreateJsonSchema } }, (req, reply) => {
  reply.code(201).send(createdBody(req.body));
});

if (process.env.STATIC_DIR) {
  const { default: fastifyStatic } = await import('@fastify/static');
  await app.register(fastifyStatic, { root: process.env.STATIC_DIR, prefix: '/static/' });
}

try {
  await app.listen({ port, host: '127.0.0.1' });
} catch (err) {
  console.error(`fastify: failed to listen on 127.0.0.1:${port}: ${err.message}`);
  process.exit(1);
}
ready(app.server.address().port);
