// The typing race's Tachyon server: `createGameApp()` for a whole app, `registerGame(app)` to
// add the game's routes to an app of your own.
export { createGameApp, type GameApp, type GameAppOptions } from './app.ts';
export {
  encodeAck,
  KEYSTROKES_CODE,
  registerGame,
  type GameAppType,
  type GameRoutes,
  type GameRoutesOptions,
  type PlayerSocket,
} from './register.ts';
export { GUEST_COOKIE } from './guest.ts';
export { GuestName, JoinData, Keystrokes, MatchmakeQuery, RoomCode } from './schemas.ts';
export { AcceptedReply, GameStateReply, MatchmakeReply, MeReply, Problem, RoomEventSchemas } from './wire.ts';
