// The race on cluster(): a room lives in the worker that matchmade it (its code starts with
// that worker's id: `2-K7QW2M`), while the acceptor hands a player's WebSocket to any worker.
// The worker holding the socket forwards the player's input for a room of another worker to
// that owner (app.cluster.request, channel "race") and relays the owner's answer; the owner
// publishes to race:<code> as always, and the cluster's bus delivers to subscribers on every
// worker. One process (or a room of this worker) never gets here: no forwarding, no copies.
import { ClusterRequestError, HttpError, type App } from '@tachyon/server';
import type { Accepted, Game, GameError, GameState, Guest } from '../game/index.ts';

/** What a worker asks a room's owner. */
export type RoomCall =
  | { op: 'exists'; roomCode: string }
  | { op: 'join'; roomCode: string; guest: Guest }
  | { op: 'keystrokes'; roomCode: string; playerId: number; text: string }
  | { op: 'backspace'; roomCode: string; playerId: number }
  | { op: 'leave'; roomCode: string; playerId: number };

const CHANNEL = 'race';

/** The worker that owns `roomCode` when it is another one than this; 0 when the room is (or would be) here. */
export function remoteOwner(app: App, roomCode: string): number {
  if (app.cluster.workers === 0) return 0;
  const dash = roomCode.indexOf('-');
  if (dash <= 0) return 0; // a code without an owner: looked up here (UNKNOWN_ROOM)
  const owner = Number(roomCode.slice(0, dash));
  return owner === app.cluster.worker ? 0 : owner;
}

/** Room codes of this worker start with its id (none in one process). */
export const codePrefixOf = (app: App): string => (app.cluster.workers > 0 ? `${app.cluster.worker}-` : '');

/** The owner's side: answers the other workers' calls for this worker's rooms with the rules' own results. */
export function answerForRooms(app: App, game: Game): void {
  app.cluster.handle(CHANNEL, (call: RoomCall) => {
    const now = Date.now();
    switch (call.op) {
      case 'exists':
        return game.room(call.roomCode) !== undefined;
      case 'join':
        return game.join(call.roomCode, call.guest, now);
      case 'keystrokes':
        return game.keystrokes(call.roomCode, call.playerId, call.text, now);
      case 'backspace':
        return game.backspace(call.roomCode, call.playerId, now);
      case 'leave':
        return game.leave(call.roomCode, call.playerId, now);
    }
  });
}

export function forward(app: App, owner: number, call: Extract<RoomCall, { op: 'join' }>): Promise<GameState | GameError>;
export function forward(
  app: App,
  owner: number,
  call: Extract<RoomCall, { op: 'keystrokes' | 'backspace' }>,
): Promise<Accepted | GameError>;
export function forward(app: App, owner: number, call: Extract<RoomCall, { op: 'exists' }>): Promise<boolean>;
export function forward(app: App, owner: number, call: Extract<RoomCall, { op: 'leave' }>): Promise<void>;
/**
 * Asks the room's owner. Its refusals come back as the rules' GameError values; when the owner
 * cannot answer (restarting, gone, too slow) this rejects with an error reply for the player:
 * 503 ROOM_UNAVAILABLE, or 404 UNKNOWN_ROOM for a worker id the cluster does not have.
 */
export async function forward(app: App, owner: number, call: RoomCall): Promise<unknown> {
  try {
    return await app.cluster.request(owner, CHANNEL, call);
  } catch (err) {
    if (err instanceof ClusterRequestError && err.code === 'UNKNOWN_WORKER')
      throw new HttpError(404, `UNKNOWN_ROOM: No room ${call.roomCode}`);
    // A leave that finds the owner gone is expected (its rooms went with it; a closing cluster): not worth a line.
    if (call.op !== 'leave')
      app.logger.warn({ err, owner, op: call.op, roomCode: call.roomCode }, 'race: the owner of a room did not answer');
    throw new HttpError(
      503,
      `ROOM_UNAVAILABLE: room ${call.roomCode} is on worker ${owner}, which is not answering (restarting?): find a new race`,
      { expose: true },
    );
  }
}
