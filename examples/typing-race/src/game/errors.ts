// Why the rules refused something. Servers turn these into error replies: the codes are part
// of the game's protocol (README: "Errors").

export type GameErrorCode =
  | 'UNKNOWN_ROOM' // no such room (never existed, or collected)
  | 'ROOM_FULL' // maxPlayers already in
  | 'RACE_STARTED' // a new player cannot join a room past its waiting countdown
  | 'NOT_JOINED' // keystrokes from a socket that joined no room
  | 'NOT_RACING' // keystrokes before the start or after the end
  | 'FINISHED' // this player already typed the whole passage
  | 'BAD_BATCH' // empty, too long, or not text
  | 'RATE_LIMITED'; // over the per-player flood limit

export interface GameError {
  readonly ok: false;
  readonly code: GameErrorCode;
  readonly message: string;
}

export function gameError(code: GameErrorCode, message: string): GameError {
  return { ok: false, code, message };
}

export function isGameError(value: unknown): value is GameError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { ok?: unknown }).ok === false &&
    typeof (value as { code?: unknown }).code === 'string'
  );
}
