// What the server sends, as schemas: the events it publishes to a room's topic and the replies
// of its requests. They put the rules' types (src/game/events.ts, dependency-free: every
// server of the capacity benchmark runs them) into the app's contract, which the typed
// clients read (`connect<WsContract<GameAppType, '/ws'>>`, `client<GameAppType>`) and the
// AsyncAPI/OpenAPI documents describe. The checks at the end fail to compile when a schema and
// the rules' type it stands for drift apart. Replies and publishes are not validated at run time.
import { z } from 'zod';
import type { Accepted, GameState, RoomEvents } from '../game/index.ts';

const Phase = z.enum(['waiting', 'starting', 'countdown', 'racing', 'ended']);

const PlayerView = z.object({
  playerId: z.number(),
  name: z.string(),
  typingIndex: z.number(),
  wrong: z.number(),
  wpm: z.number(),
  accuracy: z.number(),
  connected: z.boolean(),
  place: z.number().nullable(),
});

/** The reply to `pvp:join`. */
export const GameStateReply = z.object({
  roomCode: z.string(),
  you: z.number(),
  phase: Phase,
  passage: z.string(),
  players: z.array(PlayerView),
  secondsLeft: z.number().nullable(),
  raceElapsedMs: z.number().nullable(),
  maxPlayers: z.number(),
});

/** The reply to `pvp:keystrokes` and `pvp:backspace`. */
export const AcceptedReply = z.object({ ok: z.literal(true), typingIndex: z.number() });

const Result = z.object({
  playerId: z.number(),
  name: z.string(),
  place: z.number(),
  wpm: z.number(),
  accuracy: z.number(),
  finished: z.boolean(),
  typingIndex: z.number(),
});

/** What the rules publish to a room's topic (`race:<roomCode>`), by event. */
export const RoomEventSchemas = {
  'pvp:lobby-update': z.object({ phase: Phase, players: z.array(PlayerView) }),
  'pvp:countdown': z.object({ phase: z.enum(['starting', 'countdown']), secondsLeft: z.number() }),
  'pvp:progress-update': z.object({ playerId: z.number(), typingIndex: z.number(), wrong: z.number() }),
  'pvp:wpm-update': z.object({
    elapsedMs: z.number(),
    players: z.array(z.object({ playerId: z.number(), wpm: z.number(), accuracy: z.number() })),
  }),
  'pvp:match-ended': z.object({ results: z.array(Result) }),
};

/** The body of `GET /api/pvp/matchmake` and of `GET /api/pvp/me`, and their error (an HttpError's `{ error }`). */
export const MatchmakeReply = z.object({ roomCode: z.string() });
export const MeReply = z.object({ name: z.string() });
export const Problem = z.object({ error: z.string() });

// ----- the schemas stay the rules' types (compile-time checks, nothing at run time) -----------

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Out<S extends z.ZodType> = z.output<S>;
const sameTypes: {
  events: { [K in keyof RoomEvents]: Same<Out<(typeof RoomEventSchemas)[K]>, RoomEvents[K]> };
  state: Same<Out<typeof GameStateReply>, GameState>;
  accepted: Same<Out<typeof AcceptedReply>, Accepted>;
} = {
  events: {
    'pvp:lobby-update': true,
    'pvp:countdown': true,
    'pvp:progress-update': true,
    'pvp:wpm-update': true,
    'pvp:match-ended': true,
  },
  state: true,
  accepted: true,
};
void sameTypes;
