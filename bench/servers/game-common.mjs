// What every peer of the game-capacity benchmark (`npm run bench:game`) shares: the typing
// race's rules themselves (examples/typing-race/src/game: plain TypeScript that Node >= 22.18
// and Bun run directly), its guests (identity cookies, below), the benchmark's settings, and the
// per-second server metrics.
//
// GAME_METRICS_FILE: where each peer appends one JSON line a second:
//   {"t":<ms epoch>,"cpu":<% of one core>,"rssMb":..,"eldMeanMs":..,"eldMaxMs":..}
// Event-loop delay is measured the same way on every runtime (Bun has no
// monitorEventLoopDelay): a 10 ms timer, and how late each of its ticks fires.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { Game, TICK_MS, isGameError, longPassage, roomTopic, ROOM_CODE } from '../../examples/typing-race/src/game/index.ts';

export { isGameError, roomTopic, ROOM_CODE };

/** Races never end during a run: a long passage, an hour's limit; a short wait. */
export const GAME_CONFIG = Object.freeze({
  waitSeconds: Number(process.env.GAME_WAIT_SECONDS ?? 2),
  countdownSeconds: 3,
  maxRaceSeconds: 3600,
});
const PASSAGES = [longPassage(40_000)];

/** One Game for the process, ticked every TICK_MS; `publish(roomCode, event, data)`. */
export function createGame(publish) {
  const game = new Game({ publish, config: GAME_CONFIG, passages: PASSAGES });
  setInterval(() => game.tick(Date.now()), TICK_MS);
  return game;
}

// ------------------------------------------------------------------ guests
// What the typing race does for a player's identity (examples/typing-race/src/server/guest.ts),
// done by hand so every peer does the same work per player: matchmaking reads the Cookie
// header and, without a valid guest cookie, draws a guest id (randomBytes) and sets the
// cookie, signed with HMAC-SHA256; the upgrade reads the cookie again, and draws another id
// when there is none. The load generator sends no cookies, so each player costs two draws,
// one signature and one Set-Cookie line here, as it does in the typing race.
const COOKIE_SECRET = 'bench';
const MAX_AGE_S = 30 * 24 * 3600;
const GUEST_COOKIE = /(?:^|;\s*)guest=([^;]*)/;

const mac = (value) => createHmac('sha256', COOKIE_SECRET).update(value).digest('base64url');

function newGuest() {
  const id = randomBytes(9).toString('base64url');
  return { id, name: `Guest ${id.slice(0, 4)}` };
}

/** The guest of a Cookie header (`guest=<id>.<name>.<signature>`), verified; undefined without one. */
function cookieGuest(header) {
  const m = header ? GUEST_COOKIE.exec(header) : null;
  if (m === null) return undefined;
  let signed;
  try {
    signed = decodeURIComponent(m[1]);
  } catch {
    return undefined;
  }
  const sig = signed.lastIndexOf('.');
  const dot = signed.indexOf('.');
  if (dot <= 0 || sig <= dot) return undefined;
  const given = Buffer.from(signed.slice(sig + 1));
  const expected = Buffer.from(mac(signed.slice(0, sig)));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  return { id: signed.slice(0, dot), name: signed.slice(dot + 1, sig) };
}

/** At matchmaking: the Set-Cookie line for a new guest, or undefined when the cookie holds one. */
export function matchmakeCookie(cookieHeader) {
  if (cookieGuest(cookieHeader) !== undefined) return undefined;
  const guest = newGuest();
  const value = `${guest.id}.${guest.name}`;
  return `guest=${encodeURIComponent(`${value}.${mac(value)}`)}; Max-Age=${MAX_AGE_S}; Path=/; HttpOnly; SameSite=Lax`;
}

/** At the upgrade: the cookie's guest, or a new one for this connection only. */
export const upgradeGuest = (cookieHeader) => cookieGuest(cookieHeader) ?? newGuest();

export function reportMetrics() {
  const file = process.env.GAME_METRICS_FILE;
  if (!file) return;
  const PERIOD = 10;
  let expected = performance.now() + PERIOD;
  let lateSum = 0;
  let lateMax = 0;
  let ticks = 0;
  setInterval(() => {
    const now = performance.now();
    const late = Math.max(0, now - expected);
    lateSum += late;
    if (late > lateMax) lateMax = late;
    ticks++;
    expected = now + PERIOD;
  }, PERIOD);
  let cpu = process.cpuUsage();
  let wall = performance.now();
  setInterval(() => {
    const c = process.cpuUsage();
    const w = performance.now();
    const busy = (c.user - cpu.user + c.system - cpu.system) / 1000 / (w - wall);
    const line = {
      t: Date.now(),
      cpu: Math.round(busy * 1000) / 10,
      rssMb: Math.round(process.memoryUsage.rss() / 2 ** 20),
      eldMeanMs: ticks ? Math.round((lateSum / ticks) * 100) / 100 : null,
      eldMaxMs: Math.round(lateMax * 100) / 100,
    };
    cpu = c;
    wall = w;
    lateSum = 0;
    lateMax = 0;
    ticks = 0;
    try {
      appendFileSync(file, `${JSON.stringify(line)}\n`);
    } catch {
      /* the harness went away */
    }
  }, 1000);
}

// ------------------------------------------------------------------ Tachyon's protocol by hand
// The raw uWS and Bun peers speak Tachyon's wire protocol (docs/protocol.md) so the same load
// generator drives them and every peer sends the same bytes: the raw peer is the ceiling of
// what the framework could do with the same game.

const reply = (ref, value) => `{"type":"reply","ref":${ref},"data":${JSON.stringify(value)}}`;
const error = (ref, code, message) =>
  JSON.stringify(ref === undefined ? { type: 'error', code, message } : { type: 'error', ref, code, message });
const refused = (ref, e) => error(ref, 'HANDLER_ERROR', `${e.code}: ${e.message}`);
const TOPIC = /^race:([A-HJ-NP-Z2-9]{6})$/;

/** The envelope of a room event: `{"topic":"race:CODE","event":E,"data":…}`. */
export const envelope = (roomCode, event, data) => `{"topic":"race:${roomCode}","event":"${event}","data":${JSON.stringify(data)}}`;

/**
 * Handles one text frame of a socket whose state is `s` ({ guest, roomCode, playerId }).
 * `io.send(text)` answers this socket, `io.subscribe(topic)` subscribes it.
 */
export function handleTachyonFrame(game, s, text, io) {
  if (!text.startsWith('{"type":"')) return;
  let msg;
  try {
    msg = JSON.parse(text);
  } catch {
    return io.send(error(undefined, 'BAD_FRAME', 'Malformed JSON'));
  }
  const ref = Number.isInteger(msg.ref) && msg.ref >= 0 ? msg.ref : undefined;
  const answer = (r) => {
    if (ref === undefined) return;
    io.send(isGameError(r) ? refused(ref, r) : reply(ref, r));
  };
  switch (msg.type) {
    case 'ping':
      return io.send(ref === undefined ? '{"type":"pong"}' : `{"type":"pong","ref":${ref}}`);
    case 'subscribe': {
      const m = typeof msg.topic === 'string' ? TOPIC.exec(msg.topic) : null;
      if (m && game.room(m[1])) {
        io.subscribe(msg.topic);
        return io.send(`{"type":"subscribed","topic":${JSON.stringify(msg.topic)},"ref":${ref}}`);
      }
      return io.send(JSON.stringify({ type: 'denied', topic: String(msg.topic), ref, reason: 'not allowed' }));
    }
    case 'event':
      break;
    default:
      return io.send(error(ref, 'BAD_FRAME', 'Unknown frame type'));
  }
  const now = Date.now();
  switch (msg.event) {
    case 'pvp:keystrokes':
      if (typeof msg.data !== 'string' || msg.data.length < 1 || msg.data.length > 6)
        return io.send(error(ref, 'VALIDATION', 'Invalid event data'));
      if (s.roomCode === null) return answer({ ok: false, code: 'NOT_JOINED', message: 'Join a room first' });
      return answer(game.keystrokes(s.roomCode, s.playerId, msg.data, now));
    case 'pvp:backspace':
      if (s.roomCode === null) return answer({ ok: false, code: 'NOT_JOINED', message: 'Join a room first' });
      return answer(game.backspace(s.roomCode, s.playerId, now));
    case 'ping':
      return answer({ now });
    case 'pvp:join': {
      const code = msg.data?.roomCode;
      if (typeof code !== 'string' || !ROOM_CODE.test(code)) return io.send(error(ref, 'VALIDATION', 'Invalid event data'));
      if (s.roomCode !== null && s.roomCode !== code) game.leave(s.roomCode, s.playerId, now);
      const state = game.join(code, s.guest, now);
      if (!isGameError(state)) {
        s.roomCode = code;
        s.playerId = state.you;
        io.subscribe(roomTopic(code));
      }
      return answer(state);
    }
    default:
      return io.send(error(ref, 'UNKNOWN_EVENT', `Unknown event ${JSON.stringify(String(msg.event))}`));
  }
}
