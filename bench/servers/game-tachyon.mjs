// Game-capacity peer: the typing race's own server (examples/typing-race), as `npm start` runs
// it, with the benchmark's settings (long passage, short wait). GAME_TICK_MS: the compact
// protocol's publish tick (the `tachyon-compact` peer; its loadgen sends binary keystrokes).
// TACHYON_COMPILE_SCHEMAS=0: the events validated by safeParse (tachyon-app.mjs, schemaOptions).
import { jsonLogger } from '@tachyon/server';
import { createGameApp } from '../../examples/typing-race/src/server/index.ts';
import { GAME_CONFIG, reportMetrics } from './game-common.mjs';
import { schemaOptions } from './tachyon-app.mjs';
import { longPassage } from '../../examples/typing-race/src/game/index.ts';
import { portFromEnv, ready } from './shared.mjs';

const game = createGameApp({
  cookieSecret: 'bench',
  config: GAME_CONFIG,
  passages: [longPassage(40_000)],
  app: { logger: jsonLogger('warn'), ...schemaOptions() },
  publishTick: process.env.GAME_TICK_MS ? Number(process.env.GAME_TICK_MS) : undefined,
});
reportMetrics();
const server = await game.listen(portFromEnv(), '127.0.0.1');
ready(server.port);
