// Unknown keys in an options object are refused when it is declared: a misspelled option
// (`shema:` for `schema:`) would otherwise be ignored, its default used, and the mistake
// found in production. Each options module keeps its list of keys next to its type.

/**
 * Throws a TypeError naming the first key of `options` that is not in `known`, with the
 * closest known key as a suggestion ("did you mean …") or, when none is close, the list.
 * `where` starts the message: `cors()`, `ws /chat: event send`, `GET /users`.
 */
export function checkKnownKeys(where: string, options: object, known: readonly string[] | ReadonlySet<string>): void {
  const has = Array.isArray(known) ? (k: string) => known.includes(k) : (k: string) => (known as ReadonlySet<string>).has(k);
  for (const key of Object.keys(options)) {
    if (has(key)) continue;
    const list = [...known];
    const near = closest(key, list);
    const hint = near !== undefined ? `did you mean "${near}"?` : list.length === 0 ? 'it takes no options' : `known: ${list.join(', ')}`;
    throw new TypeError(`${where}: unknown option "${key}" (${hint})`);
  }
}

/**
 * The known key nearest to `key`: the same letters in another case, else the smallest edit
 * distance when it is at most 2 (and smaller than the key, so `id` does not suggest `to`).
 */
export function closest(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = 3;
  for (const k of known) {
    if (k.toLowerCase() === lower) return k;
    const d = editDistance(lower, k.toLowerCase(), bestDistance);
    if (d < bestDistance && d < key.length) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance, or `limit` as soon as it is known to be at least that (keys are short). */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) >= limit) return limit;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const v = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      row.push(v);
      if (v < rowMin) rowMin = v;
    }
    if (rowMin >= limit) return limit;
    prev = row;
  }
  return Math.min(prev[b.length]!, limit);
}
