// History options of a topic pattern (`app.topic(pattern, { history })`): how many messages
// and for how long a topic keeps what was published, so a client that reconnects can be
// given what it missed (docs/history.md).
import type { HistoryOptions } from './store.ts';
import { checkKnownKeys } from '../../core/options-check.ts';

// Declared in store.ts, beside the store it names (one-way imports: store.ts needs it too).
export type { HistoryOptions } from './store.ts';

const KNOWN = Object.keys({ size: true, ttl: true, store: true } satisfies Record<keyof HistoryOptions, true>);

/** Checks history options when the pattern is declared. */
export function checkHistoryOptions(pattern: string, h: HistoryOptions): Readonly<HistoryOptions> {
  const fail = (msg: string): never => {
    throw new TypeError(`topic ${pattern}: history.${msg}`);
  };
  if (typeof h !== 'object' || h === null) throw new TypeError(`topic ${pattern}: history must be an object`);
  checkKnownKeys(`topic ${pattern}: history`, h, KNOWN);
  if (!Number.isInteger(h.size) || h.size < 1 || h.size > 1_000_000) fail('size must be an integer from 1 to 1000000');
  if (h.ttl !== undefined && (!Number.isInteger(h.ttl) || h.ttl < 1)) fail('ttl must be a positive integer (milliseconds)');
  if (
    h.store !== undefined &&
    (typeof h.store !== 'object' || h.store === null || typeof h.store.append !== 'function' || typeof h.store.read !== 'function')
  )
    fail('store must be a history store (e.g. redisHistory() from @tachyon/redis)');
  return Object.freeze({ ...h });
}
