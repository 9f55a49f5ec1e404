// Reads the index.json Autobahn|Testsuite's fuzzing client writes ({ agent: { case: { behavior,
// behaviorClose, ... } } }) and sums it up per agent: how many cases ended with each behaviour,
// and which cases did not end OK. Separate from the runner so that it is tested without Python.

/** The behaviours wstest reports, best first. A case's verdict is the worse of its two. */
export const BEHAVIORS = ['OK', 'NON-STRICT', 'INFORMATIONAL', 'UNIMPLEMENTED', 'FAILED'];

/**
 * One case's verdict: `behavior` is about the messages, `behaviorClose` about the closing
 * handshake; a case with OK messages and a wrong close is not OK. wstest writes
 * "WRONG CODE" / "UNCLEAN" / "FAILED BY CLIENT" for closes: those count as FAILED.
 */
export function verdict(entry) {
  const rank = (b) => {
    if (b === undefined) return 0;
    const i = BEHAVIORS.indexOf(b);
    return i === -1 ? BEHAVIORS.length - 1 : i;
  };
  return BEHAVIORS[Math.max(rank(entry.behavior), rank(entry.behaviorClose))];
}

/** Case ids ("12.1.10") in the suite's order: numerically, part by part. */
export function compareCases(a, b) {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? -1) - (pb[i] ?? -1);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * `{ agent: { counts: { OK: n, ... }, cases: n, others: { behavior: [caseId...] } } }`.
 * Throws on a file that is not an index (so a broken run is not summed up as zero failures).
 */
export function summarize(index) {
  if (index === null || typeof index !== 'object' || Array.isArray(index)) throw new Error('index.json is not an object of agents');
  const out = {};
  for (const [agent, cases] of Object.entries(index)) {
    if (cases === null || typeof cases !== 'object') throw new Error(`index.json: agent ${agent} has no cases`);
    const counts = Object.fromEntries(BEHAVIORS.map((b) => [b, 0]));
    const others = {};
    const ids = Object.keys(cases).sort(compareCases);
    for (const id of ids) {
      const entry = cases[id];
      if (entry === null || typeof entry !== 'object' || typeof entry.behavior !== 'string')
        throw new Error(`index.json: case ${id} of ${agent} has no behavior`);
      const v = verdict(entry);
      counts[v]++;
      if (v !== 'OK') (others[v] ??= []).push(id);
    }
    out[agent] = { cases: ids.length, counts, others };
  }
  return out;
}

/** Case ids as runs: ["6.4.1", "6.4.2", "6.4.3", "7.1.1"] → "6.4.1–6.4.3, 7.1.1". */
export function compactCases(ids) {
  const runs = [];
  for (const id of ids) {
    const last = runs.at(-1);
    const prefix = id.slice(0, id.lastIndexOf('.') + 1);
    const n = Number(id.slice(prefix.length));
    if (last && last.prefix === prefix && last.to + 1 === n) last.to = n;
    else runs.push({ prefix, from: n, to: n });
  }
  return runs.map((r) => (r.from === r.to ? `${r.prefix}${r.from}` : `${r.prefix}${r.from}–${r.prefix}${r.to}`)).join(', ');
}

/** The summary as text lines, one block per agent. */
export function formatSummary(summary) {
  const lines = [];
  for (const [agent, s] of Object.entries(summary)) {
    lines.push(`${agent}: ${s.cases} cases: ${BEHAVIORS.map((b) => `${b} ${s.counts[b]}`).join(', ')}`);
    for (const b of BEHAVIORS) if (s.others[b]) lines.push(`  ${b}: ${compactCases(s.others[b])}`);
  }
  return lines;
}
