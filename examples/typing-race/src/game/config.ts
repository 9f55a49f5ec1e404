// The game's tunables. Every peer of the capacity benchmark runs the rules with the same
// values, so they live in one plain object (no I/O, no environment reads here: the servers
// read WAIT_SECONDS and pass it in).

export interface GameConfig {
  /** Players in one room, at most. */
  maxPlayers: number;
  /** Players needed before the waiting countdown starts. */
  minPlayers: number;
  /** Seconds of the waiting countdown (others may still join), once `minPlayers` are in. */
  waitSeconds: number;
  /** Seconds of the final 3-2-1 (nobody joins any more). */
  countdownSeconds: number;
  /** A race ends after this many seconds even if someone is still typing. */
  maxRaceSeconds: number;
  /** Characters in one `pvp:keystrokes` batch, at most. */
  maxBatch: number;
  /** Flood limit per player: keystroke and backspace events per second (token bucket rate)... */
  floodRate: number;
  /** ...and the bucket's size (the burst allowed after a pause). */
  floodBurst: number;
  /** Wrong characters a player may type past their first mistake before backspacing. */
  maxWrong: number;
  /** A matchmade seat is held this long for the player to connect and join. */
  reservationMs: number;
  /** A disconnected player's seat is kept this long during a race, for a reconnect. */
  reconnectGraceMs: number;
  /** An ended room stays this long (results, late reconnects) before it is collected. */
  endedLingerMs: number;
}

export const DEFAULT_CONFIG: Readonly<GameConfig> = Object.freeze({
  maxPlayers: 6,
  minPlayers: 2,
  waitSeconds: 10,
  countdownSeconds: 3,
  maxRaceSeconds: 180,
  maxBatch: 6,
  floodRate: 40,
  floodBurst: 60,
  maxWrong: 10,
  reservationMs: 10_000,
  reconnectGraceMs: 30_000,
  endedLingerMs: 30_000,
});

/** The defaults with `overrides` applied; throws on values that would break the rules. */
export function gameConfig(overrides: Partial<GameConfig> = {}): GameConfig {
  const c: GameConfig = { ...DEFAULT_CONFIG, ...overrides };
  const positive = (name: keyof GameConfig, min = 0) => {
    if (!Number.isFinite(c[name]) || c[name] < min)
      throw new RangeError(`game config: ${name} must be a number >= ${min} (got ${c[name]})`);
  };
  positive('maxPlayers', 1);
  positive('minPlayers', 1);
  positive('waitSeconds');
  positive('countdownSeconds');
  positive('maxRaceSeconds', 1);
  positive('maxBatch', 1);
  positive('floodRate', 1);
  positive('floodBurst', 1);
  positive('maxWrong', 1);
  positive('reservationMs');
  positive('reconnectGraceMs');
  positive('endedLingerMs');
  if (c.minPlayers > c.maxPlayers) throw new RangeError('game config: minPlayers must be <= maxPlayers');
  return c;
}
