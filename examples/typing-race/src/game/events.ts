// What the rules publish to a room's players, and the shapes of the data. Servers put them on
// the wire as they are (Tachyon: topic `race:<roomCode>`; Socket.IO: the room).

export type Phase = 'waiting' | 'starting' | 'countdown' | 'racing' | 'ended';

export interface PlayerView {
  playerId: number;
  name: string;
  typingIndex: number;
  wrong: number;
  wpm: number;
  accuracy: number;
  connected: boolean;
  place: number | null;
}

/** The reply to `pvp:join`: everything a page needs to draw the race. */
export interface GameState {
  roomCode: string;
  you: number;
  phase: Phase;
  passage: string;
  players: PlayerView[];
  /** Seconds left in the current countdown (`starting`, `countdown`), else null. */
  secondsLeft: number | null;
  /** Milliseconds since the race started (`racing`, `ended`), else null. */
  raceElapsedMs: number | null;
  maxPlayers: number;
}

export interface LobbyUpdate {
  phase: Phase;
  players: PlayerView[];
}
export interface Countdown {
  phase: 'starting' | 'countdown';
  secondsLeft: number;
}
export interface ProgressUpdate {
  playerId: number;
  typingIndex: number;
  wrong: number;
}
export interface WpmUpdate {
  elapsedMs: number;
  players: { playerId: number; wpm: number; accuracy: number }[];
}
export interface Result {
  playerId: number;
  name: string;
  place: number;
  wpm: number;
  accuracy: number;
  finished: boolean;
  typingIndex: number;
}
export interface MatchEnded {
  results: Result[];
}

export interface RoomEvents {
  'pvp:lobby-update': LobbyUpdate;
  'pvp:countdown': Countdown;
  'pvp:progress-update': ProgressUpdate;
  'pvp:wpm-update': WpmUpdate;
  'pvp:match-ended': MatchEnded;
}

/** Where the rules send their events: the server publishes `data` to the room's topic. */
export type Publish = <K extends keyof RoomEvents>(roomCode: string, event: K, data: RoomEvents[K]) => void;

/** The topic (Tachyon) a room's events go to. */
export const roomTopic = (roomCode: string): string => `race:${roomCode}`;
