// The typing race's rules: no I/O, no dependencies. Every server of the example and of the
// capacity benchmark (Tachyon, Socket.IO, Bun, raw uWebSockets.js) runs this same module.
export { DEFAULT_CONFIG, gameConfig, type GameConfig } from './config.ts';
export { gameError, isGameError, type GameError, type GameErrorCode } from './errors.ts';
export {
  roomTopic,
  type Countdown,
  type GameState,
  type LobbyUpdate,
  type MatchEnded,
  type Phase,
  type PlayerView,
  type ProgressUpdate,
  type Publish,
  type Result,
  type RoomEvents,
  type WpmUpdate,
} from './events.ts';
export { TokenBucket } from './flood.ts';
export { Game, ROOM_CODE, TICK_MS, type GameOptions } from './game.ts';
export { PASSAGES, longPassage } from './passages.ts';
export { Room, type Accepted, type Guest } from './room.ts';
export { Typing, round1, wordsPerMinute, type TypeResult } from './typing.ts';
