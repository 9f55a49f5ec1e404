// The game on a Tachyon app: `GET /api/pvp/matchmake` and the WebSocket at `/ws`. Kept apart
// from the app's creation so that the pages (a SvelteKit app) can be mounted beside these
// routes on the same App.
import { HttpError, type App, type Socket } from '@tachyon/server';
import { z } from 'zod';
import { Game, TICK_MS, roomTopic, type GameConfig, type GameError, type GameErrorCode, type Guest } from '../game/index.ts';
import { guestFrom, newGuest, setGuestCookie } from './guest.ts';
import { JoinData, Keystrokes, MatchmakeQuery } from './schemas.ts';

export interface GameRoutesOptions {
  /** Rules settings (waitSeconds, maxRaceSeconds, ...). */
  config?: Partial<GameConfig>;
  /** Passages to race on (default: the built-in ones). */
  passages?: readonly string[];
  /** Where the WebSocket lives (default `/ws`). */
  wsPath?: string;
  /** Prefix of the HTTP API (default `/api/pvp`). */
  apiPrefix?: string;
}

/** What each socket carries: its guest, and the room it joined (if any). */
export interface PlayerSocket {
  guest: Guest;
  roomCode: string | null;
  playerId: number;
}

export interface GameRoutes {
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

const ROOM_TOPIC = /^race:([A-HJ-NP-Z2-9]{6})$/;

export function registerGame(app: App, options: GameRoutesOptions = {}): GameRoutes {
  const game = new Game({
    config: options.config,
    passages: options.passages,
    publish: (roomCode, event, data) => {
      app.publish(roomTopic(roomCode), event, data);
    },
  });
  const api = options.apiPrefix ?? '/api/pvp';

  app.get(`${api}/matchmake`, { query: MatchmakeQuery }, (req, res) => {
    const known = guestFrom(req);
    const name = req.query.name;
    // A name in the query renames the guest (same id: a reconnect is still the same player).
    const guest = known ? (name && name !== known.name ? { id: known.id, name } : known) : newGuest(name);
    if (guest !== known) setGuestCookie(res, guest);
    return { roomCode: game.matchmake(Date.now()) };
  });

  app.get(`${api}/me`, (req) => {
    const guest = guestFrom(req);
    if (!guest) throw new HttpError(404, 'No guest yet: matchmake first');
    return { name: guest.name };
  });

  const leaveRoom = (ws: Socket<PlayerSocket>) => {
    const { roomCode, playerId } = ws.data;
    if (roomCode === null) return;
    ws.unsubscribe(roomTopic(roomCode));
    game.leave(roomCode, playerId, Date.now());
    ws.data.roomCode = null;
    ws.data.playerId = 0;
  };

  app.ws(options.wsPath ?? '/ws', {
    upgrade: (req): PlayerSocket => ({ guest: guestFrom(req) ?? newGuest(), roomCode: null, playerId: 0 }),
    // Only the topics of rooms that exist.
    subscribe(ws, topic) {
      const m = ROOM_TOPIC.exec(topic);
      return m !== null && game.room(m[1]!) !== undefined;
    },
    events: {
      'pvp:join': {
        schema: JoinData,
        handler(ws, { roomCode }) {
          if (ws.data.roomCode !== null && ws.data.roomCode !== roomCode) leaveRoom(ws);
          const state = game.join(roomCode, ws.data.guest, Date.now());
          if ('ok' in state) throw refused(state);
          ws.data.roomCode = roomCode;
          ws.data.playerId = state.you;
          ws.subscribe(roomTopic(roomCode));
          return state;
        },
      },
      'pvp:keystrokes': {
        schema: Keystrokes,
        handler(ws, text) {
          if (ws.data.roomCode === null) throw refused({ ok: false, code: 'NOT_JOINED', message: 'Join a room first' });
          const r = game.keystrokes(ws.data.roomCode, ws.data.playerId, text, Date.now());
          if (!r.ok) throw refused(r);
          return r;
        },
      },
      'pvp:backspace': {
        schema: z.undefined(),
        handler(ws) {
          if (ws.data.roomCode === null) throw refused({ ok: false, code: 'NOT_JOINED', message: 'Join a room first' });
          const r = game.backspace(ws.data.roomCode, ws.data.playerId, Date.now());
          if (!r.ok) throw refused(r);
          return r;
        },
      },
      ping: {
        handler: () => ({ now: Date.now() }),
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
  return { game, stop: () => clearInterval(timer) };
}
