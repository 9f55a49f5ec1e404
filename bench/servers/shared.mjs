// Shared by the three peer servers so every scenario does the same work and
// sends byte-identical bodies. Nothing here is framework-specific.
import { z } from 'zod';

/** `/users/:id` path parameters. */
export const Params = z.object({ id: z.coerce.number().int().positive() });

/** `/users/:id` query string. */
export const Query = z.object({ fields: z.string().optional() });

/** The realistic scenario's reply (~200 bytes of JSON once stringified). */
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
