// One race as reactive state: joins the room over the game's WebSocket, follows what the
// room publishes, and sends the typing (batched: one `pvp:keystrokes` of 1–6 characters per
// flush, so fast typists stay under the server's rate limit).
import { Connection } from '@tachyon/sveltekit/client';
import type {
  Countdown,
  GameState,
  LobbyUpdate,
  MatchEnded,
  Phase,
  PlayerView,
  ProgressUpdate,
  Result,
  WpmUpdate,
} from '../../../src/game/events.ts';

export type { Phase, PlayerView, Result };

/** A batch goes out this long after its first character, or at once when it holds 6. */
const FLUSH_MS = 40;
const MAX_BATCH = 6;
const PING_EVERY_MS = 2000;

/** Distinct caret colours, by seat order (a room holds at most 6 players). */
export const COLOURS = ['#38bdf8', '#f472b6', '#a3e635', '#fbbf24', '#c084fc', '#fb923c'];

let shared: Connection | undefined;
/** One connection for every page of the tab. */
export const connection = (): Connection => (shared ??= new Connection({ path: '/ws' }));

export class Race {
  readonly roomCode: string;
  /** `missing`: the code names no room (never existed, ended and collected, or malformed). */
  phase = $state<Phase | 'joining' | 'missing'>('joining');
  passage = $state('');
  you = $state(0);
  players = $state<PlayerView[]>([]);
  secondsLeft = $state<number | null>(null);
  results = $state<Result[] | null>(null);
  latency = $state<number | null>(null);
  error = $state<string | null>(null);
  /** Seat colour of each player id (first seen, first served). */
  colours = $state<Record<number, string>>({});

  #pending = '';
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stops: (() => void)[] = [];

  constructor(roomCode: string) {
    this.roomCode = roomCode;
  }

  get me(): PlayerView | undefined {
    return this.players.find((p) => p.playerId === this.you);
  }

  /** Subscribes, joins, and starts pinging. */
  async start(): Promise<void> {
    const live = connection().live;
    if (!live) return;
    this.#stops.push(
      live.subscribe(`race:${this.roomCode}`, (event, data) => this.#on(event, data), {
        onDenied: () => (this.phase = 'missing'),
      }),
    );
    if (!(await this.#join())) return;
    // After a reconnect the new socket is in no room: join again (same guest cookie, so the
    // server gives back the seat and the progress).
    let wasOpen = true;
    this.#stops.push(
      live.onStatus((status) => {
        if (status === 'open' && !wasOpen) void this.#join();
        wasOpen = status === 'open';
      }),
    );
    const ping = async () => {
      try {
        this.latency = Math.round((await live.ping({ timeout: 5000 })) * 10) / 10;
      } catch {
        this.latency = null;
      }
    };
    void ping();
    const interval = setInterval(ping, PING_EVERY_MS);
    this.#stops.push(() => clearInterval(interval));
  }

  async #join(): Promise<boolean> {
    const live = connection().live!;
    try {
      this.#state((await live.request('pvp:join', { roomCode: this.roomCode })) as GameState);
      this.error = null;
      return true;
    } catch (e) {
      // The server's codes (README, "Errors"): a malformed code fails the schema (VALIDATION),
      // a well-formed one that names no room is refused with UNKNOWN_ROOM. Both are "no such
      // race" to a player, not a protocol message.
      const { code, message } = e as { code?: string; message: string };
      if (code === 'VALIDATION' || message.startsWith('UNKNOWN_ROOM')) this.phase = 'missing';
      else this.error = message;
      return false;
    }
  }

  stop(): void {
    clearTimeout(this.#timer);
    for (const stop of this.#stops.splice(0)) stop();
  }

  /** Typed characters (from the input); sent in batches. */
  type(text: string): void {
    if (this.phase !== 'racing') return;
    for (const ch of text) {
      this.#pending += ch;
      if (this.#pending.length >= MAX_BATCH) this.#flush();
    }
    if (this.#pending !== '' && this.#timer === undefined) this.#timer = setTimeout(() => this.#flush(), FLUSH_MS);
  }

  backspace(): void {
    if (this.phase !== 'racing') return;
    this.#flush();
    void this.#send('pvp:backspace');
  }

  #flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#pending === '') return;
    const batch = this.#pending;
    this.#pending = '';
    void this.#send('pvp:keystrokes', batch);
  }

  async #send(event: 'pvp:keystrokes' | 'pvp:backspace', data?: string): Promise<void> {
    const live = connection().live;
    if (!live) return;
    try {
      // Frames go out in order, so the batches reach the server in typing order.
      await (data === undefined ? live.request(event) : live.request(event, data));
    } catch (e) {
      const message = (e as Error).message;
      // Typing past the end races the match-ended event: not worth a banner.
      if (!/FINISHED|NOT_RACING/.test(message)) this.error = message;
    }
  }

  #state(s: GameState): void {
    this.phase = s.phase;
    this.passage = s.passage;
    this.you = s.you;
    this.#players(s.players);
    this.secondsLeft = s.secondsLeft;
  }

  #players(players: PlayerView[]): void {
    for (const p of players)
      if (!(p.playerId in this.colours)) this.colours[p.playerId] = COLOURS[Object.keys(this.colours).length % COLOURS.length]!;
    this.players = players;
  }

  #on(event: string, data: unknown): void {
    switch (event) {
      case 'pvp:lobby-update': {
        const d = data as LobbyUpdate;
        this.phase = d.phase;
        this.#players(d.players);
        if (d.phase === 'racing' || d.phase === 'waiting') this.secondsLeft = null;
        break;
      }
      case 'pvp:countdown': {
        const d = data as Countdown;
        this.phase = d.phase;
        this.secondsLeft = d.secondsLeft;
        break;
      }
      case 'pvp:progress-update': {
        const d = data as ProgressUpdate;
        const p = this.players.find((x) => x.playerId === d.playerId);
        if (p) {
          p.typingIndex = d.typingIndex;
          p.wrong = d.wrong;
        }
        break;
      }
      case 'pvp:wpm-update': {
        for (const w of (data as WpmUpdate).players) {
          const p = this.players.find((x) => x.playerId === w.playerId);
          if (p) {
            p.wpm = w.wpm;
            p.accuracy = w.accuracy;
          }
        }
        break;
      }
      case 'pvp:match-ended': {
        this.#flush();
        this.phase = 'ended';
        this.results = (data as MatchEnded).results;
        break;
      }
    }
  }
}

/** Matchmakes as `name`; resolves with the room code (the guest cookie is set on the way). */
export async function findRace(name: string): Promise<string> {
  // No name yet (a visitor who came by a link): the server picks a guest name.
  const res = await fetch(name ? `/api/pvp/matchmake?name=${encodeURIComponent(name)}` : '/api/pvp/matchmake');
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { message?: string } | null;
    throw new Error(body?.message ?? `Matchmaking failed (${res.status})`);
  }
  return ((await res.json()) as { roomCode: string }).roomCode;
}
