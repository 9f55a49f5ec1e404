// The hello example: routes, validation, cookies, streaming and a static page.
// Run it with `npm start` from the repository root; PORT defaults to 3000. It runs in one
// thread; `WORKERS=2 npm start` (or WORKERS=auto: every core) runs it on worker threads
// sharing the port (docs/cluster.md): this file then runs once per worker, and `createApp`
// in each. The `users` map below is then per worker: real apps keep state in a database.
import { readFileSync } from 'node:fs';
import { App, HttpError, Router, cluster, jsonLogger } from '@tachyon/server';
import { z } from 'zod';

const page = readFileSync(new URL('./public/index.html', import.meta.url), 'utf8');
const logger = jsonLogger(process.env.LOG_LEVEL === 'debug' ? 'debug' : 'info');

function createApp(): App {
  const users = new Map<number, { id: number; name: string }>([[1, { id: 1, name: 'Ada' }]]);

  const app = new App({
    cookieSecret: process.env.COOKIE_SECRET ?? 'dev-only-secret-change-me',
    logger,
  });

  app.use((req, res, next) => {
    res.header('x-served-by', app.worker === 0 ? 'tachyon' : `tachyon worker ${app.worker}`);
    return next();
  });

  app.get('/', (req, res) => res.html(page));

  const api = new Router();
  api.get('/hello', { query: z.object({ name: z.string().max(40).default('world') }) }, (req) => ({
    message: `Hello, ${req.query.name}!`,
  }));

  api.get('/users/:id', { params: z.object({ id: z.coerce.number().int().positive() }) }, (req) => {
    const user = users.get(req.params.id);
    if (!user) throw new HttpError(404, `No user ${req.params.id}`);
    return user;
  });

  api.post('/users', { body: z.object({ name: z.string().trim().min(1).max(40) }) }, (req, res) => {
    const user = { id: users.size + 1, name: req.body.name };
    users.set(user.id, user);
    res.status(201).json(user);
  });

  api.post('/login', { body: z.object({ name: z.string().trim().min(1).max(40) }) }, (req, res) => {
    res.cookie('session', req.body.name, { signed: true, httpOnly: true, sameSite: 'lax', maxAge: 3600 });
    return { ok: true };
  });
  api.get('/me', (req) => {
    const name = req.signedCookies.session;
    if (!name) throw new HttpError(401, 'Not logged in (or the cookie was tampered with)');
    return { name };
  });
  api.post('/logout', (req, res) => {
    res.clearCookie('session');
    return { ok: true };
  });

  api.get('/clock', (req, res) => {
    const events = res.sse();
    const tick = () => events.send({ now: new Date().toISOString() }, { event: 'tick' });
    tick();
    const timer = setInterval(() => (events.open ? tick() : clearInterval(timer)), 1000);
    req.signal.addEventListener('abort', () => clearInterval(timer));
  });

  app.attach('/api', api);
  return app;
}

// SIGINT/SIGTERM close it gracefully (in-flight requests finish, then the process exits).
const server = await cluster({ workers: 1, port: Number(process.env.PORT ?? 3000), logger, shutdownTimeout: 5000 }, createApp);
console.log(`Tachyon hello example on http://localhost:${server.port}${server.workers > 0 ? ` (${server.workers} worker threads)` : ''}`);
