// A Game under a fake clock that records what it publishes.
import { Game, type GameConfig, type RoomEvents } from '../src/game/index.ts';

export interface Published {
  roomCode: string;
  event: keyof RoomEvents;
  data: any;
}

export function seeded(seed = 42): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export function testGame(config: Partial<GameConfig> = {}, passages = ['hello world']) {
  const published: Published[] = [];
  const game = new Game({
    publish: (roomCode, event, data) => published.push({ roomCode, event, data }),
    config: { waitSeconds: 2, countdownSeconds: 3, ...config },
    passages,
    random: seeded(),
  });
  const events = (name: keyof RoomEvents) => published.filter((p) => p.event === name).map((p) => p.data);
  return { game, published, events };
}

/** Ticks the game every 100 ms from `from` to `to` (inclusive). */
export function run(game: Game, from: number, to: number): number {
  for (let t = from; t <= to; t += 100) game.tick(t);
  return to;
}
