// A realistic app for the document tests: users CRUD with Zod schemas (a named User
// component), reply schemas, tags, security, a router, a wildcard, an any() route, a hidden
// route, and a WebSocket route with events. Plus the validators every document goes through.
import { Parser } from '@asyncapi/parser';
import { Validator } from '@seriousme/openapi-schema-validator';
import { App, Router, silentLogger } from '@tachyon/server';
import { z } from 'zod';

export const User = z
  .object({ id: z.number().int().positive(), name: z.string().min(1).max(100), email: z.email(), tags: z.array(z.string()).optional() })
  .meta({ id: 'User', description: 'A user of the shop.' });
export const NewUser = User.omit({ id: true }).meta({ id: 'NewUser' });
export const NotFound = z.object({ error: z.string() }).meta({ id: 'NotFound' });
const IdParams = z.object({ id: z.coerce.number().int().positive().describe('The user id.') });

export function shopApp(logger = silentLogger): App {
  const app = new App({ logger });
  const users = new Router();
  users.get(
    '/',
    {
      query: z.object({ limit: z.coerce.number().int().min(1).max(100).default(20), q: z.string().optional() }),
      response: { 200: z.array(User) },
      summary: 'List users',
      tags: ['users'],
    },
    () => [],
  );
  users.get(
    '/:id',
    { params: IdParams, response: { 200: User, 404: NotFound }, summary: 'One user', tags: ['users'], operationId: 'getUser' },
    (req) => ({ id: req.params.id, name: 'Ann', email: 'ann@example.com' }),
  );
  users.post(
    '/',
    {
      body: NewUser,
      consumes: ['json', 'urlencoded'],
      bodyLimit: 4096,
      response: { 201: User },
      summary: 'Create a user',
      description: 'Creates a user. **Markdown** works here.',
      tags: ['users'],
      security: [{ bearer: [] }],
    },
    (req, res) => {
      res.status(201);
      return { id: 1, ...req.body };
    },
  );
  users.put(
    '/:id',
    { params: IdParams, body: NewUser, response: { 200: User, '4XX': NotFound }, tags: ['users'], security: [{ bearer: ['admin'] }] },
    (req) => ({ id: req.params.id, ...req.body }),
  );
  users.delete(
    '/:id',
    {
      params: IdParams,
      deprecated: true,
      tags: ['users'],
      headers: z.object({ 'x-reason': z.string().optional(), authorization: z.string() }),
    },
    () => null,
  );
  app.attach('/users', users);
  app.get('/files/*', { summary: 'A file' }, () => 'file');
  app.any('/echo', { body: z.unknown(), consumes: ['text', 'json'] }, (req) => req.body);
  app.get('/internal', { hide: true }, () => 'secret');
  app.get('/health', { response: { default: z.object({ ok: z.boolean() }) } }, () => ({ ok: true }));
  app.ws('/live/:room', {
    events: {
      'chat:send': { schema: z.object({ text: z.string().max(500) }), handler: () => ({ ok: true }) },
      // Also a binary frame [1, ...utf8] (docs/protocol.md, "Binary events").
      typing: { binary: 1, handler: () => undefined },
    },
  });
  return app;
}

const openApiValidator = new Validator();

/** Validates an OpenAPI 3.1 document; throws with the validator's errors. */
export async function assertValidOpenApi(doc: unknown): Promise<void> {
  const result = await openApiValidator.validate(structuredClone(doc) as Parameters<Validator['validate']>[0]);
  if (!result.valid) throw new Error(`invalid OpenAPI document: ${JSON.stringify(result.errors, null, 2).slice(0, 4000)}`);
  if (openApiValidator.version !== '3.1') throw new Error(`validated as OpenAPI ${openApiValidator.version}, not 3.1`);
}

/** Parses an AsyncAPI document with the official parser; throws on any error diagnostic. */
export async function assertValidAsyncApi(doc: unknown): Promise<void> {
  const { document, diagnostics } = await new Parser().parse(JSON.stringify(doc));
  const errors = diagnostics.filter((d) => d.severity === 0);
  if (document === undefined || errors.length > 0)
    throw new Error(
      `invalid AsyncAPI document: ${JSON.stringify(
        errors.map((d) => ({ path: d.path, message: d.message })),
        null,
        2,
      ).slice(0, 4000)}`,
    );
}
