// The `fallback` option of a ws route (docs/realtime.md, "Fallback transport"), checked when
// the route is declared (behavior.ts).

export interface FallbackOptions {
  /** Seconds between heartbeat comments on idle streams, so buffering proxies keep them open (1–300). Default 15. */
  heartbeat?: number;
}

/** Checks `fallback` when the route is declared: the heartbeat in seconds, or null when the route has none. */
export function checkFallback(value: unknown, fail: (msg: string) => never): number | null {
  if (value === undefined || value === false) return null;
  if (value === true) return 15;
  if (typeof value !== 'object' || value === null) return fail('fallback must be true, false or { heartbeat }');
  for (const key of Object.keys(value)) if (key !== 'heartbeat') fail(`fallback: unknown option ${JSON.stringify(key)}`);
  const heartbeat = (value as FallbackOptions).heartbeat ?? 15;
  if (!Number.isInteger(heartbeat) || heartbeat < 1 || heartbeat > 300) fail('fallback.heartbeat must be an integer from 1 to 300 seconds');
  return heartbeat;
}
