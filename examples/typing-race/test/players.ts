// Real players for the server tests: matchmaking over HTTP (keeping the guest cookie), then
// @tachyon/client over a real WebSocket that sends the cookie like a browser would. Both
// clients are typed from the server's app (`GameAppType`): no hand-written maps.
import { connect, type WsContract } from '@tachyon/client';
import { client } from '@tachyon/client/http';
import type { GameState, RoomEvents } from '../src/game/index.ts';
import type { GameAppType } from '../src/server/index.ts';

/** The game's ws route: its requests and the room topics' events, from the server's declarations. */
export type GameContract = WsContract<GameAppType, '/ws'>;
export type GameLive = ReturnType<typeof connect<GameContract>>;

export interface TestPlayer {
  live: GameLive;
  roomCode: string;
  cookie: string;
  state: GameState;
  /** Every event published to the room, in order. */
  events: { event: keyof RoomEvents; data: any }[];
  close(): void;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function eventually(check: () => boolean, timeout = 5000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeout;
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what} not met within ${timeout} ms`);
    await sleep(10);
  }
}

/** A WebSocket class that sends `cookie` on the handshake (Node's WebSocket takes headers in its init). */
function withCookie(cookie: string) {
  return class extends WebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, { protocols, headers: { cookie } } as unknown as string[]);
    }
  };
}

export async function matchmake(port: number, name?: string, cookie?: string): Promise<{ roomCode: string; cookie: string }> {
  const api = client<GameAppType>(`http://127.0.0.1:${port}`);
  const res = await api.get('/api/pvp/matchmake', { query: name ? { name } : {}, headers: cookie ? { cookie } : {} });
  if (!res.ok) throw new Error(`matchmake: ${res.status} ${JSON.stringify(res.data)}`);
  const set = res.headers.get('set-cookie');
  return { roomCode: res.data.roomCode, cookie: set ? set.split(';')[0]! : cookie! };
}

/** Error answers nobody waits for (the client's `onError`); ignored by default. */
type OnError = (error: unknown) => void;

/** Connects with `cookie`, subscribes to the room and joins it. */
export async function joinAs(port: number, roomCode: string, cookie: string, onError: OnError = () => {}): Promise<TestPlayer> {
  const live = connect<GameContract>(`ws://127.0.0.1:${port}/ws`, { WebSocket: withCookie(cookie), onError });
  const events: TestPlayer['events'] = [];
  live.subscribe(`race:${roomCode}`, (event, data) => events.push({ event, data }));
  const state = await live.request('pvp:join', { roomCode });
  return { live, roomCode, cookie, state, events, close: () => live.close() };
}

export async function player(port: number, name: string, onError?: OnError): Promise<TestPlayer> {
  const { roomCode, cookie } = await matchmake(port, name);
  return joinAs(port, roomCode, cookie, onError);
}
