// One race as reactive state: joins the room over the game's WebSocket, follows what the
// room publishes, and sends the typing (batched: one `pvp:keystrokes` of 1–6 characters per
// flush, so fast typists stay under the server's rate limit). The requests, their replies and
// the room's events are typed from the server's app (`GameAppType`), and matchmaking goes
// through the typed HTTP client: nothing here restates what the server declares.
import type { connect, TopicListener, TopicEvents, WsContract } from '@tachyon/client';
import { client } from '@tachyon/client/http';
import { Connection } from '@tachyon/sveltekit/client';
import type { GameState, Phase, PlayerView, Result } from '../../../src/game/events.ts';
import type { GameAppType } from '../../../src/server/index.ts';

export type { Phase, PlayerView, Result };

/** A batch goes out this long after its first character, or at once when it holds 6. */
const FLUSH_MS = 40;
const MAX_BATCH = 6;
const PING_EVERY_MS = 2000;

/** Distinct caret colours, by seat order (a room holds at most 6 players). */
export const COLOURS = ['#38bdf8', '#f472b6', '#a3e635', '#fbbf24', '#c084fc', '#fb923c'];

type GameContract = WsContract<GameAppType, '/ws'>;
type GameLive = ReturnType<typeof connect<GameContract>>;
/** What a room's topic carries, by event (from the server's `app.topic('race:*', …)`). */
type RoomListener = TopicListener<TopicEvents<GameContract['~wsContract']['topics'], `race:${string}`>>;

let shared: Connection | undefined;
/** One connection for every page of the tab. */
export const connection = (): Connection => (shared ??= new Connection({ path: '/ws' }));
/** The connection's client typed with the game's contract (the adapter's `Connection` holds an untyped one; same object). */
const gameLive = (): GameLive | undefined => connection().live as GameLive | undefined;

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
    const live = gameLive();
    if (!live) return;
    this.#stops.push(
      live.subscribe(`race:${this.roomCode}`, (...args) => this.#on(...args), {
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
    const live = gameLive()!;
    try {
      this.#state(await live.request('pvp:join', { roomCode: this.roomCode }));
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

  async #send(...args: ['pvp:keystrokes', string] | ['pvp:backspace']): Promise<void> {
    const live = gameLive();
    if (!live) return;
    try {
      // Frames go out in order, so the batches reach the server in typing order.
      await (args[0] === 'pvp:backspace' ? live.request(args[0]) : live.request(args[0], args[1]));
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

  #on: RoomListener = (...[event, data]) => {
    switch (event) {
      case 'pvp:lobby-update': {
        const d = data;
        this.phase = d.phase;
        this.#players(d.players);
        if (d.phase === 'racing' || d.phase === 'waiting') this.secondsLeft = null;
        break;
      }
      case 'pvp:countdown': {
        const d = data;
        this.phase = d.phase;
        this.secondsLeft = d.secondsLeft;
        break;
      }
      case 'pvp:progress-update': {
        const d = data;
        const p = this.players.find((x) => x.playerId === d.playerId);
        if (p) {
          p.typingIndex = d.typingIndex;
          p.wrong = d.wrong;
        }
        break;
      }
      case 'pvp:wpm-update': {
        for (const w of data.players) {
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
        this.results = data.results;
        break;
      }
    }
  };
}

/** The game's HTTP API, typed from the server's routes ('' : the page's own origin). */
const api = client<GameAppType>('');

/** Matchmakes as `name`; resolves with the room code (the guest cookie is set on the way). */
export async function findRace(name: string): Promise<string> {
  // No name yet (a visitor who came by a link): the server picks a guest name.
  const res = await api.get('/api/pvp/matchmake', { query: name ? { name } : {} });
  if (res.ok) return res.data.roomCode;
  // Undeclared statuses (a 400 for a bad name) carry the server's `{ error }` body.
  const body = res.data as { error?: string } | undefined;
  throw new Error(body?.error ?? `Matchmaking failed (${res.status})`);
}
