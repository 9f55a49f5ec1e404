// The typing race: `npm start` in this folder (or at the repository's root). One process: the
// game's Tachyon App with the pages (web/, SvelteKit, built by scripts/build-web.mjs) installed
// on it. PORT (3000), HOST (0.0.0.0: every interface, as adapter-node), WAIT_SECONDS (the waiting countdown once two players are in: 10 in
// production, 3 otherwise), COOKIE_SECRET, PUBLISH_TICK_MS (the compact protocol's tick). WORKERS=2 (or auto) runs it on cluster(): this file
// then runs again in every worker thread, each building the same App (README, "On all cores").
import { existsSync } from 'node:fs';
import { cluster } from '@tachyon/server';
import { createGameApp, type GameApp } from './src/server/index.ts';

const production = process.env.NODE_ENV === 'production';
if (production && !process.env.COOKIE_SECRET) {
  console.error('typing-race: set COOKIE_SECRET in production (it signs the guest cookie)');
  process.exit(1);
}
const waitSeconds = Number(process.env.WAIT_SECONDS ?? (production ? 10 : 3));
const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST || '0.0.0.0';
const publishTick = process.env.PUBLISH_TICK_MS ? Number(process.env.PUBLISH_TICK_MS) : undefined;
/** Where to point a browser: localhost when listening on every interface. */
const shown = (p: number) => `http://${host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host}:${p}`;

async function build(): Promise<GameApp> {
  const game = createGameApp({ cookieSecret: process.env.COOKIE_SECRET, config: { waitSeconds }, publishTick });
  // The pages go last: SvelteKit's SSR answers every path the game's routes did not take.
  const pages = new URL('./web/build/handler.js', import.meta.url);
  if (existsSync(pages)) {
    const { install } = (await import(pages.href)) as { install(app: typeof game.app): void };
    install(game.app);
  } else {
    console.warn('typing-race: the pages are not built (node scripts/build-web.mjs): serving the game API only');
  }
  return game;
}

if (!process.env.WORKERS) {
  const server = await (await build()).listen(port, host);
  console.log(`Typing race on ${shown(server.port)} (matchmake: GET /api/pvp/matchmake, WebSocket: /ws)`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void server.close({ timeout: 5000 }).then(() => process.exit(0)));
  }
} else {
  // WORKERS picks the count (cluster() reads it); in a worker thread this call never returns.
  const server = await cluster({ workers: 'auto', port, host, shutdownTimeout: 5000 }, async () => {
    const game = await build();
    game.app.onClose(() => game.stop());
    return game.app;
  });
  console.log(`Typing race on ${shown(server.port)}, ${server.workers} workers (matchmake: GET /api/pvp/matchmake, WebSocket: /ws)`);
}
