// The game on a Tachyon app: `GET /api/pvp/matchmake`, `GET /api/pvp/me`, the room topics
// `race:*` and the WebSocket at `/ws`. Kept apart from the app's creation so that the pages (a
// SvelteKit app) can be mounted beside these routes on the same App. Declared in one chain, at
// fixed paths: the returned app's type carries them all (`GameAppType`), and the typed clients
// of the pages and the tests read it.
import { HttpError, type App, type Socket } from '@tachyon/server';
import { z } from 'zod';
import {
  Game,
  TICK_MS,
  roomTopic,
  type Accepted,
  type GameConfig,
  type GameError,
  type GameErrorCode,
  type GameState,
  type Guest,
} from '../game/index.ts';
import { guestFrom, newGuest, setGuestCookie } from './guest.ts';
import { JoinData, Keystrokes, MatchmakeQuery } from './schemas.ts';
import { AcceptedReply, GameStateReply, MatchmakeReply, MeReply, Problem, RoomEventSchemas } from './wire.ts';
import { answerForRooms, codePrefixOf, forward, remoteOwner } from './workers.ts';

export interface GameRoutesOptions {
  /** Rules settings (waitSeconds, maxRaceSeconds, ...). */
  config?: Partial<GameConfig>;
  /** Passages to race on (default: the built-in ones). */
  passages?: readonly string[];
  /**
   * Answer each binary keystroke with its own binary acknowledgement, `[1, typingIndex as u32
   * little-endian]` (README, "Compact protocol"): with a publish tick, the room's progress
   * update waits for the tick; the acknowledgement does not. Default: off (the room's update is
   * the answer).
   */
  binaryAcks?: boolean;
}

/** What each socket carries: its guest, and the room it joined (if any). */
export interface PlayerSocket {
  guest: Guest;
  roomCode: string | null;
  playerId: number;
  /** On cluster(): the worker that owns the joined room when it is another one (its input is forwarded there), else 0. */
  owner: number;
}

export interface GameRoutes<A = GameAppType> {
  /** The app the game was added to, typed with the game's routes and topics. */
  app: A;
  game: Game;
  /** Stops the game's clock (call when the server closes). */
  stop(): void;
}

const STATUS: Record<GameErrorCode, number> = {
  UNKNOWN_ROOM: 404,
  ROOM_FULL: 409,
  RACE_STARTED: 409,
  NOT_JOINED: 409,
  NOT_RACING: 409,
  FINISHED: 409,
  BAD_BATCH: 400,
  RATE_LIMITED: 429,
};

/** A refusal of the rules as an error reply: `{"type":"error","code":"HANDLER_ERROR","message":"NOT_RACING: …"}`. */
function refused(e: GameError): HttpError {
  return new HttpError(STATUS[e.code], `${e.code}: ${e.message}`);
}

/** The game's app type: the routes, topics and ws route `registerGame` adds to a plain `App`. */
export type GameAppType = ReturnType<typeof registerGame>['app'];

/** The first byte of a binary `pvp:keystrokes` frame, and of its acknowledgement (README, "Compact protocol"). */
export const KEYSTROKES_CODE = 1;

/** The acknowledgement's bytes after the code: the typing index, a u32 little-endian. */
export function encodeAck(a: Accepted): Uint8Array {
  // Four stores into a fresh array: an array literal goes through the generic TypedArray-from-
  // iterable path, and `.buffer` (a DataView) would move the bytes off V8's heap. A Uint8Array
  // keeps the low 8 bits of what is stored.
  const i = a.typingIndex;
  const bytes = new Uint8Array(4);
  bytes[0] = i;
  bytes[1] = i >>> 8;
  bytes[2] = i >>> 16;
  bytes[3] = i >>> 24;
  return bytes;
}

const ROOM_TOPIC = /^race:((?:[1-9][0-9]{0,3}-)?[A-HJ-NP-Z2-9]{6})$/;

export function registerGame(app: App, options: GameRoutesOptions = {}) {
  const game = new Game({
    config: options.config,
    passages: options.passages,
    publish: (roomCode, event, data) => {
      app.publish(roomTopic(roomCode), event, data);
    },
    // On cluster(): this worker's id before each code, so that every worker knows a room's owner.
    codePrefix: codePrefixOf(app),
  });
  // On cluster(): answer the other workers for this worker's rooms (src/server/workers.ts).
  if (app.cluster.workers > 0) answerForRooms(app, game);
  const leaveRoom = (ws: Socket<PlayerSocket>) => {
    const { roomCode, playerId, owner } = ws.data;
    if (roomCode === null) return;
    ws.unsubscribe(roomTopic(roomCode));
    if (owner === 0) game.leave(roomCode, playerId, Date.now());
    else forward(app, owner, { op: 'leave', roomCode, playerId }).catch(() => {}); // an owner that is gone took the room with it
    ws.data.roomCode = null;
    ws.data.playerId = 0;
    ws.data.owner = 0;
  };

  const joined = (ws: Socket<PlayerSocket>, roomCode: string, owner: number, state: GameState | GameError): GameState => {
    if ('ok' in state) throw refused(state);
    if (ws.closed) {
      // Closed while the owner was answering: nobody will send its leave.
      if (owner !== 0) void forward(app, owner, { op: 'leave', roomCode, playerId: state.you }).catch(() => {});
      return state;
    }
    // Another join of this socket answered first (two joins in flight to owners): leave that room.
    if (ws.data.roomCode !== null && ws.data.roomCode !== roomCode) leaveRoom(ws);
    ws.data.roomCode = roomCode;
    ws.data.playerId = state.you;
    ws.data.owner = owner;
    ws.subscribe(roomTopic(roomCode));
    return state;
  };
  const accepted = (r: Accepted | GameError): Accepted => {
    if (!r.ok) throw refused(r);
    return r;
  };

  const typed = app
    // What a room's topic carries (publishes and typed clients read it).
    .topic('race:*', { events: RoomEventSchemas })
    .get('/api/pvp/matchmake', { query: MatchmakeQuery, response: { 200: MatchmakeReply } }, (req, res) => {
      const known = guestFrom(req);
      const name = req.query.name;
      // A name in the query renames the guest (same id: a reconnect is still the same player).
      const guest = known ? (name && name !== known.name ? { id: known.id, name } : known) : newGuest(name);
      if (guest !== known) setGuestCookie(res, guest);
      return { roomCode: game.matchmake(Date.now()) };
    })
    .get('/api/pvp/me', { response: { 200: MeReply, 404: Problem } }, (req) => {
      const guest = guestFrom(req);
      if (!guest) throw new HttpError(404, 'No guest yet: matchmake first');
      return { name: guest.name };
    })
    .ws('/ws', {
      upgrade: (req): PlayerSocket => ({ guest: guestFrom(req) ?? newGuest(), roomCode: null, playerId: 0, owner: 0 }),
      // Only the topics of rooms that exist (asking their owner on cluster()).
      subscribe(ws, topic) {
        const m = ROOM_TOPIC.exec(topic);
        if (m === null) return false;
        const owner = remoteOwner(app, m[1]!);
        if (owner === 0) return game.room(m[1]!) !== undefined;
        return forward(app, owner, { op: 'exists', roomCode: m[1]! }).catch(() => false);
      },
      events: {
        'pvp:join': {
          schema: JoinData,
          reply: GameStateReply,
          handler(ws, { roomCode }) {
            if (ws.data.roomCode !== null && ws.data.roomCode !== roomCode) leaveRoom(ws);
            const owner = remoteOwner(app, roomCode);
            if (owner === 0) return joined(ws, roomCode, 0, game.join(roomCode, ws.data.guest, Date.now()));
            return forward(app, owner, { op: 'join', roomCode, guest: ws.data.guest }).then((state) => joined(ws, roomCode, owner, state));
          },
        },
        'pvp:keystrokes': {
          // Also as a binary frame, code 1 then the characters' UTF-8: the compact protocol's
          // hot event. Its answer is the room's progress update, or with binaryAcks a binary
          // frame of its own, [1, typingIndex u32 LE] (sent at once, before any tick).
          binary: options.binaryAcks === true ? { code: KEYSTROKES_CODE, encode: encodeAck } : KEYSTROKES_CODE,
          schema: Keystrokes,
          reply: AcceptedReply,
          handler(ws, text) {
            const { roomCode, playerId, owner } = ws.data;
            if (roomCode === null) throw refused({ ok: false, code: 'NOT_JOINED', message: 'Join a room first' });
            if (owner !== 0) return forward(app, owner, { op: 'keystrokes', roomCode, playerId, text }).then(accepted);
            return accepted(game.keystrokes(roomCode, playerId, text, Date.now()));
          },
        },
        'pvp:backspace': {
          schema: z.undefined(),
          reply: AcceptedReply,
          handler(ws) {
            const { roomCode, playerId, owner } = ws.data;
            if (roomCode === null) throw refused({ ok: false, code: 'NOT_JOINED', message: 'Join a room first' });
            if (owner !== 0) return forward(app, owner, { op: 'backspace', roomCode, playerId }).then(accepted);
            return accepted(game.backspace(roomCode, playerId, Date.now()));
          },
        },
        // On cluster(), also which worker holds this socket (for tools and tests).
        ping: {
          reply: z.object({ now: z.number(), worker: z.number().optional() }),
          handler: () => (app.cluster.workers === 0 ? { now: Date.now() } : { now: Date.now(), worker: app.cluster.worker }),
        },
      },
      close(ws) {
        leaveRoom(ws);
      },
      // Keystroke batches are tiny: a frame over 1 KiB is not a client of ours.
      maxPayloadLength: 1024,
    });

  const timer = setInterval(() => game.tick(Date.now()), TICK_MS);
  timer.unref();
  return { app: typed, game, stop: () => clearInterval(timer) } satisfies GameRoutes<typeof typed>;
}
