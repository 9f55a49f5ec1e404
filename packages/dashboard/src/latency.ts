// Request durations as a histogram over fixed log-spaced bounds (0.01 ms × 1.25ⁿ, up to about
// 37 s): per request a short scan and one increment, no sample kept; two workers' histograms
// merge by adding, so cluster-wide percentiles need no raw samples. A percentile is read as its
// bucket's upper bound: within 25% of the true value, enough for a dashboard.

const FIRST = 0.01;
const RATIO = 1.25;
export const BOUNDS: readonly number[] = Array.from({ length: 70 }, (_, i) => FIRST * RATIO ** i);

/** The bucket of a duration in ms (the last one takes everything above the last bound). */
export function bucketOf(ms: number): number {
  if (!(ms > FIRST)) return 0;
  const i = Math.ceil(Math.log(ms / FIRST) / Math.log(RATIO));
  return Math.min(i, BOUNDS.length);
}

/** The `q` quantile (0..1) of a histogram, as its bucket's upper bound in ms; 0 when it is empty. */
export function quantile(buckets: ArrayLike<number>, q: number): number {
  let total = 0;
  for (let i = 0; i < buckets.length; i++) total += buckets[i]!;
  if (total === 0) return 0;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i < buckets.length; i++) {
    seen += buckets[i]!;
    if (seen >= rank) return BOUNDS[Math.min(i, BOUNDS.length - 1)]!;
  }
  return BOUNDS[BOUNDS.length - 1]!;
}
