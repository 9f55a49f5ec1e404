// Shared by the peer servers so every scenario does the same work and sends byte-identical
// bodies. Nothing here is framework-specific, and it runs on Node, Bun and Deno alike.
import { z } from 'zod';

/** `/users/:id` path parameters. */
export const Params = z.object({ id: z.coerce.number().int().positive() });

/** `/users/:id` query string. */
export const Query = z.object({ fields: z.string().optional() });

/** The realistic GET scenario's reply (~200 bytes of JSON once stringified). */
export function userBody(id, fields) {
  return {
    id,
    fields: fields ? fields.split(',') : [],
    name: 'User ' + id,
    email: 'user' + id + '@example.com',
    roles: ['reader', 'editor'],
    active: true,
    createdAt: '2024-01-15T09:30:00.000Z',
    bio: 'Benchmark fixture account used by the quick harness.',
  };
}

/** Shape of the POST /users body. Fastify and Elysia express the same rules in their own schema languages. */
export const EMAIL_PATTERN = '^[^@\\s]+@[^@\\s]+$';
export const ROLES = ['reader', 'editor', 'admin'];
export const UserCreate = z.object({
  name: z.string().min(1).max(100),
  email: z.string().regex(new RegExp(EMAIL_PATTERN)),
  age: z.number().int().min(0).max(150),
  roles: z.array(z.enum(ROLES)).max(10),
  tags: z.array(z.string().min(1).max(32)).max(20),
  bio: z.string().max(2000),
});

/** JSON Schema of the same rules (Fastify's own validation; Ajv compiles it). */
export const userCreateJsonSchema = {
  type: 'object',
  required: ['name', 'email', 'age', 'roles', 'tags', 'bio'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    email: { type: 'string', pattern: EMAIL_PATTERN },
    age: { type: 'integer', minimum: 0, maximum: 150 },
    roles: { type: 'array', maxItems: 10, items: { type: 'string', enum: ROLES } },
    tags: { type: 'array', maxItems: 20, items: { type: 'string', minLength: 1, maxLength: 32 } },
    bio: { type: 'string', maxLength: 2000 },
  },
};

/** The POST /users reply (201), built from the validated body only. */
export function createdBody(u) {
  return { id: 1001, name: u.name, email: u.email, age: u.age, roles: u.roles, tagCount: u.tags.length };
}

/** The POST /users request body the load generator sends: exactly 1024 bytes of JSON. */
export const POST_BODY_BYTES = 1024;
export function postBody() {
  const base = {
    name: 'Ada Lovelace',
    email: 'ada@example.com',
    age: 36,
    roles: ['reader', 'editor'],
    tags: ['math', 'engines', 'poetry', 'notes', 'analysis', 'bernoulli', 'loom', 'london'],
    bio: '',
  };
  const without = JSON.stringify(base).length;
  base.bio = 'Analyst of the Analytical Engine. '.repeat(64).slice(0, POST_BODY_BYTES - without);
  const json = JSON.stringify(base);
  if (json.length !== POST_BODY_BYTES) throw new Error(`post body is ${json.length} bytes`);
  return json;
}

/** WebSocket limits every WS peer uses (Tachyon's defaults for backpressure). */
export const WS_MAX_PAYLOAD = 1 << 20;
export const WS_MAX_BACKPRESSURE = 1 << 20;
/** Fan-out topic and Socket.IO event names, as the loadgen sends them. */
export const TOPIC = 'bench';

/** The port to listen on (0 = let the kernel pick; the READY line reports it). */
export function portFromEnv() {
  const port = Number(process.env.PORT ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`bad PORT: ${process.env.PORT}`);
    process.exit(2);
  }
  return port;
}

/** Tells the harness we are up. Must be the only `READY` line on stdout. */
export function ready(port) {
  process.stdout.write(`READY ${port}\n`);
  // A clean exit on SIGINT lets `node --cpu-prof` write its profile (bench/profile.mjs).
  process.once('SIGINT', () => process.exit(0));
  // Under the harness, stdin is a pipe from it: if the harness dies without
  // killing us (SIGKILL, crash), the pipe closes and we exit instead of leaking.
  if (process.env.BENCH_HARNESS === '1') {
    process.stdin.on('end', () => process.exit(0));
    process.stdin.on('error', () => process.exit(0));
    process.stdin.resume();
  }
}
