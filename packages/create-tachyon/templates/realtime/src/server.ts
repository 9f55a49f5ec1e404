// The entry point: `npm run dev` (restarts on changes), `npm start` (production).
// PORT (3000) and HOST (0.0.0.0: reachable from outside a container) choose where to listen.
import { createApp } from './app.ts';

const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '0.0.0.0';

const server = await createApp().listen({ port, host });
console.log(`Listening on http://localhost:${server.port}`);

// docker stop, Ctrl-C: stop accepting, let in-flight requests finish (10 s at most), exit.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void server.close({ timeout: 10_000 }).then(() => process.exit(0)));
}
