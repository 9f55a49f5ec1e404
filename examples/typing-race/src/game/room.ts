// One room and its state machine:
//   waiting   fewer than minPlayers; anyone may join
//   starting  the waiting countdown (waitSeconds); others may still join; a full room skips it
//   countdown the 3-2-1; nobody new joins
//   racing    keystrokes count
//   ended     results published; the room lingers, then is collected
// Time comes in as `now` (ms) on every call, so the rules run the same under a test's fake
// clock and under each benchmark peer.
import type { GameConfig } from './config.ts';
import { gameError, type GameError } from './errors.ts';
import type { GameState, Phase, PlayerView, Publish, Result } from './events.ts';
import { TokenBucket } from './flood.ts';
import { Typing, round1, wordsPerMinute } from './typing.ts';

export interface Guest {
  /** Stable across reconnects (the server's guest cookie, or one per socket). */
  id: string;
  name: string;
}

interface Player {
  readonly playerId: number;
  readonly guestId: string;
  readonly name: string;
  readonly typing: Typing;
  readonly bucket: TokenBucket;
  connected: boolean;
  disconnectedAt: number;
  finishedAt: number;
  place: number | null;
}

export type Accepted = { ok: true; typingIndex: number };

export class Room {
  readonly code: string;
  readonly passage: string;
  readonly #config: GameConfig;
  readonly #publish: Publish;
  // By playerId (small integers from 1, never reused in a room).
  readonly #players = new Map<number, Player>();
  #nextId = 1;
  #phase: Phase = 'waiting';
  /** End of the current countdown, or of the race (maxRaceSeconds). */
  #deadline = 0;
  #lastSecondsLeft = -1;
  #raceStart = 0;
  #nextWpmAt = 0;
  #endedAt = 0;
  #places = 0;
  /** Expiry times of seats handed out by matchmaking, oldest first. */
  readonly #reservations: number[] = [];

  constructor(code: string, passage: string, config: GameConfig, publish: Publish) {
    this.code = code;
    this.passage = passage;
    this.#config = config;
    this.#publish = publish;
  }

  get phase(): Phase {
    return this.#phase;
  }

  /** Seats taken: players plus live reservations. */
  seatsTaken(now: number): number {
    this.#dropExpiredReservations(now);
    return this.#seated() + this.#reservations.length;
  }

  /** Matchmaking may send another player here. */
  joinable(now: number): boolean {
    return (this.#phase === 'waiting' || this.#phase === 'starting') && this.seatsTaken(now) < this.#config.maxPlayers;
  }

  get playerCount(): number {
    return this.#players.size;
  }

  /** Holds a seat for a player who matchmade and has not joined yet. */
  reserve(now: number): void {
    this.#reservations.push(now + this.#config.reservationMs);
  }

  /**
   * A guest joins, or rejoins: the same guest id gets its seat, progress and player id back
   * (a reconnect mid-race). Before the 3-2-1 a player who left has no seat to come back to.
   */
  join(guest: Guest, now: number): GameState | GameError {
    for (const p of this.#players.values()) {
      if (p.guestId !== guest.id) continue;
      if (!p.connected) {
        p.connected = true;
        this.#lobbyUpdate(now);
      }
      return this.state(p.playerId, now);
    }
    if (this.#phase !== 'waiting' && this.#phase !== 'starting')
      return gameError('RACE_STARTED', `Room ${this.code} is past its waiting countdown`);
    this.#dropExpiredReservations(now);
    // A matchmade player uses their reservation; one who came without takes a free seat.
    if (this.#reservations.length > 0 && this.#players.size < this.#config.maxPlayers) this.#reservations.shift();
    else if (this.#players.size + this.#reservations.length >= this.#config.maxPlayers)
      return gameError('ROOM_FULL', `Room ${this.code} is full`);
    const player: Player = {
      playerId: this.#nextId++,
      guestId: guest.id,
      name: guest.name,
      typing: new Typing(this.passage, this.#config.maxWrong),
      bucket: new TokenBucket(this.#config.floodRate, this.#config.floodBurst, now),
      connected: true,
      disconnectedAt: 0,
      finishedAt: 0,
      place: null,
    };
    this.#players.set(player.playerId, player);
    const seated = this.#players.size;
    if (seated >= this.#config.maxPlayers) this.#enter('countdown', now);
    else if (this.#phase === 'waiting' && seated >= this.#config.minPlayers) this.#enter('starting', now);
    else this.#lobbyUpdate(now);
    return this.state(player.playerId, now);
  }

  /** The player's socket went away. Before the 3-2-1 their seat is freed; later it is kept for a reconnect. */
  leave(playerId: number, now: number): void {
    const p = this.#players.get(playerId);
    if (!p?.connected) return;
    if (this.#phase === 'waiting' || this.#phase === 'starting') {
      this.#players.delete(playerId);
      if (this.#phase === 'starting' && this.#players.size < this.#config.minPlayers) {
        this.#phase = 'waiting';
        this.#lastSecondsLeft = -1;
      }
    } else {
      p.connected = false;
      p.disconnectedAt = now;
    }
    this.#lobbyUpdate(now);
    if (this.#phase === 'racing') this.#maybeEnd(now);
  }

  keystrokes(playerId: number, text: string, now: number): Accepted | GameError {
    const p = this.#racer(playerId, now);
    if (!('typing' in p)) return p;
    if (text.length === 0 || text.length > this.#config.maxBatch)
      return gameError('BAD_BATCH', `A batch holds 1 to ${this.#config.maxBatch} characters`);
    const r = p.typing.type(text);
    this.#publish(this.code, 'pvp:progress-update', { playerId, typingIndex: p.typing.typingIndex, wrong: p.typing.wrong });
    if (r.finished) this.#finish(p, now);
    return { ok: true, typingIndex: p.typing.typingIndex };
  }

  backspace(playerId: number, now: number): Accepted | GameError {
    const p = this.#racer(playerId, now);
    if (!('typing' in p)) return p;
    if (p.typing.backspace())
      this.#publish(this.code, 'pvp:progress-update', { playerId, typingIndex: p.typing.typingIndex, wrong: p.typing.wrong });
    return { ok: true, typingIndex: p.typing.typingIndex };
  }

  /** Drives the clocks: countdown seconds, phase changes, WPM every second, the time limit. */
  tick(now: number): void {
    switch (this.#phase) {
      case 'starting':
      case 'countdown': {
        if (now >= this.#deadline) {
          if (this.#phase === 'starting') this.#enter('countdown', now);
          else this.#enter('racing', now);
          return;
        }
        const left = Math.ceil((this.#deadline - now) / 1000);
        if (left !== this.#lastSecondsLeft) {
          this.#lastSecondsLeft = left;
          this.#publish(this.code, 'pvp:countdown', { phase: this.#phase, secondsLeft: left });
        }
        return;
      }
      case 'racing':
        if (now >= this.#nextWpmAt) {
          this.#nextWpmAt += 1000;
          if (this.#nextWpmAt <= now) this.#nextWpmAt = now + 1000;
          this.#publish(this.code, 'pvp:wpm-update', {
            elapsedMs: now - this.#raceStart,
            players: Array.from(this.#players.values(), (p) => ({
              playerId: p.playerId,
              wpm: this.#wpm(p, now),
              accuracy: round1(p.typing.accuracy * 100),
            })),
          });
        }
        if (now >= this.#deadline) this.#end(now);
        else this.#maybeEnd(now);
        return;
      default:
        return;
    }
  }

  /** Nobody will come back: the room can go. */
  collectable(now: number): boolean {
    switch (this.#phase) {
      case 'waiting':
      case 'starting':
        return this.seatsTaken(now) === 0;
      case 'ended':
        return now >= this.#endedAt + this.#config.endedLingerMs || this.#none((p) => p.connected);
      default:
        return this.#none((p) => p.connected || now < p.disconnectedAt + this.#config.reconnectGraceMs);
    }
  }

  state(you: number, now: number): GameState {
    const counting = this.#phase === 'starting' || this.#phase === 'countdown';
    return {
      roomCode: this.code,
      you,
      phase: this.#phase,
      passage: this.passage,
      players: this.#views(now),
      secondsLeft: counting ? Math.max(0, Math.ceil((this.#deadline - now) / 1000)) : null,
      raceElapsedMs: this.#phase === 'racing' || this.#phase === 'ended' ? Math.min(now, this.#endedAt || now) - this.#raceStart : null,
      maxPlayers: this.#config.maxPlayers,
    };
  }

  // ------------------------------------------------------------------ internals

  #seated(): number {
    return this.#players.size;
  }

  #none(pred: (p: Player) => boolean): boolean {
    for (const p of this.#players.values()) if (pred(p)) return false;
    return true;
  }

  #dropExpiredReservations(now: number): void {
    while (this.#reservations.length > 0 && this.#reservations[0]! <= now) this.#reservations.shift();
  }

  #racer(playerId: number, now: number): Player | GameError {
    const p = this.#players.get(playerId);
    if (!p) return gameError('NOT_JOINED', 'Join a room first');
    if (this.#phase !== 'racing') return gameError('NOT_RACING', this.#phase === 'ended' ? 'The race is over' : 'The race has not started');
    if (p.finishedAt !== 0) return gameError('FINISHED', 'You already finished');
    if (!p.bucket.take(now)) return gameError('RATE_LIMITED', 'Too many keystroke events: slow down');
    return p;
  }

  #enter(phase: Phase, now: number): void {
    this.#phase = phase;
    this.#lastSecondsLeft = -1;
    if (phase === 'starting') this.#deadline = now + this.#config.waitSeconds * 1000;
    else if (phase === 'countdown') {
      // Seats are final: players who left before the 3-2-1 are gone for good.
      this.#deadline = now + this.#config.countdownSeconds * 1000;
    } else if (phase === 'racing') {
      this.#raceStart = now;
      this.#nextWpmAt = now + 1000;
      this.#deadline = now + this.#config.maxRaceSeconds * 1000;
    }
    this.#lobbyUpdate(now);
    if (phase === 'starting' || phase === 'countdown') this.tick(now);
  }

  #finish(p: Player, now: number): void {
    p.finishedAt = now;
    p.place = ++this.#places;
    this.#maybeEnd(now);
  }

  /** Ends the race once every player still in it (connected, or within the grace time) finished. */
  #maybeEnd(now: number): void {
    if (this.#none((p) => p.finishedAt === 0 && (p.connected || now < p.disconnectedAt + this.#config.reconnectGraceMs))) this.#end(now);
  }

  #end(now: number): void {
    this.#phase = 'ended';
    this.#endedAt = now;
    const ranked = [...this.#players.values()].sort(
      (a, b) => (a.place ?? Infinity) - (b.place ?? Infinity) || b.typing.typingIndex - a.typing.typingIndex || a.playerId - b.playerId,
    );
    const results: Result[] = ranked.map((p, i) => {
      if (p.place === null) p.place = i + 1;
      return {
        playerId: p.playerId,
        name: p.name,
        place: p.place,
        wpm: this.#wpm(p, now),
        accuracy: round1(p.typing.accuracy * 100),
        finished: p.finishedAt !== 0,
        typingIndex: p.typing.typingIndex,
      };
    });
    this.#lobbyUpdate(now);
    this.#publish(this.code, 'pvp:match-ended', { results });
  }

  #wpm(p: Player, now: number): number {
    const end = p.finishedAt || (this.#endedAt && this.#phase === 'ended' ? this.#endedAt : now);
    return round1(wordsPerMinute(p.typing.typingIndex, end - this.#raceStart));
  }

  #views(now: number): PlayerView[] {
    const started = this.#phase === 'racing' || this.#phase === 'ended';
    const out: PlayerView[] = [];
    for (const p of this.#players.values()) {
      out.push({
        playerId: p.playerId,
        name: p.name,
        typingIndex: p.typing.typingIndex,
        wrong: p.typing.wrong,
        wpm: started ? this.#wpm(p, now) : 0,
        accuracy: round1(p.typing.accuracy * 100),
        connected: p.connected,
        place: p.place,
      });
    }
    return out;
  }

  #lobbyUpdate(now: number): void {
    this.#publish(this.code, 'pvp:lobby-update', { phase: this.#phase, players: this.#views(now) });
  }
}
