// All the rooms of one server: matchmaking, routing each player's input to their room, the
// clock tick, and collecting rooms nobody will come back to. A server keeps one Game and
// calls `tick(now)` every TICK_MS.
import { gameConfig, type GameConfig } from './config.ts';
import { gameError, type GameError } from './errors.ts';
import type { GameState, Publish } from './events.ts';
import { PASSAGES } from './passages.ts';
import { Room, type Accepted, type Guest } from './room.ts';

/** How often servers call `tick`: the countdown and WPM clocks are this precise. */
export const TICK_MS = 100;

const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'; // no 0/O, 1/I: read aloud to a friend
const CODE_LENGTH = 6;
/**
 * Room codes as the protocol accepts them: 6 letters/digits, after the owner's worker id and a
 * dash when the server runs on cluster() (`2-K7QW2M`: room K7QW2M of worker 2).
 */
export const ROOM_CODE = /^(?:[1-9][0-9]{0,3}-)?[A-HJ-NP-Z2-9]{6}$/;

export interface GameOptions {
  publish: Publish;
  config?: Partial<GameConfig>;
  /** Passages to pick from (default: PASSAGES); benchmarks pass one long passage. */
  passages?: readonly string[];
  /** 0 <= x < 1; default Math.random. Tests pass a seeded one. */
  random?: () => number;
  /** Put before every room code: the worker id and a dash on cluster() (`2-`), so any worker knows a room's owner. */
  codePrefix?: string;
}

export class Game {
  readonly config: GameConfig;
  readonly #publish: Publish;
  readonly #passages: readonly string[];
  readonly #random: () => number;
  readonly #rooms = new Map<string, Room>();
  /** Rooms matchmaking may still fill (pruned lazily), in the order they opened. */
  readonly #open = new Set<Room>();
  readonly #codePrefix: string;

  constructor(options: GameOptions) {
    this.config = gameConfig(options.config);
    this.#publish = options.publish;
    this.#passages = options.passages ?? PASSAGES;
    if (this.#passages.length === 0) throw new RangeError('game: no passages');
    this.#random = options.random ?? Math.random;
    this.#codePrefix = options.codePrefix ?? '';
  }

  get roomCount(): number {
    return this.#rooms.size;
  }

  room(code: string): Room | undefined {
    return this.#rooms.get(code);
  }

  /** A room with a free seat (the oldest waiting one), or a new room; the seat is held for the player. */
  matchmake(now: number): string {
    for (const room of this.#open) {
      if (room.joinable(now)) {
        room.reserve(now);
        return room.code;
      }
      if (room.phase !== 'waiting' && room.phase !== 'starting') this.#open.delete(room);
    }
    const room = this.#openRoom();
    room.reserve(now);
    return room.code;
  }

  join(roomCode: string, guest: Guest, now: number): GameState | GameError {
    const room = this.#rooms.get(roomCode);
    if (!room) return gameError('UNKNOWN_ROOM', `No room ${roomCode}`);
    return room.join(guest, now);
  }

  leave(roomCode: string, playerId: number, now: number): void {
    this.#rooms.get(roomCode)?.leave(playerId, now);
  }

  keystrokes(roomCode: string, playerId: number, text: string, now: number): Accepted | GameError {
    const room = this.#rooms.get(roomCode);
    if (!room) return gameError('UNKNOWN_ROOM', `No room ${roomCode}`);
    return room.keystrokes(playerId, text, now);
  }

  backspace(roomCode: string, playerId: number, now: number): Accepted | GameError {
    const room = this.#rooms.get(roomCode);
    if (!room) return gameError('UNKNOWN_ROOM', `No room ${roomCode}`);
    return room.backspace(playerId, now);
  }

  /** Advances every room's clocks and collects the rooms nobody will come back to. */
  tick(now: number): void {
    for (const room of this.#rooms.values()) {
      room.tick(now);
      if (room.collectable(now)) {
        this.#rooms.delete(room.code);
        this.#open.delete(room);
      }
    }
  }

  #openRoom(): Room {
    let code: string;
    do code = this.#code();
    while (this.#rooms.has(code));
    const passage = this.#passages[Math.floor(this.#random() * this.#passages.length)]!;
    const room = new Room(code, passage, this.config, this.#publish);
    this.#rooms.set(code, room);
    this.#open.add(room);
    return room;
  }

  #code(): string {
    let code = this.#codePrefix;
    for (let i = 0; i < CODE_LENGTH; i++) code += CODE_ALPHABET[Math.floor(this.#random() * CODE_ALPHABET.length)];
    return code;
  }
}
