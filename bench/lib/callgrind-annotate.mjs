// The functions that a callgrind dump counted, per request, for `bench/instructions.mjs
// --annotate N`. callgrind knows native symbols (V8's builtins and runtime, libc, the uWS
// addon) but sees JavaScript as anonymous addresses; node's --perf-basic-prof writes the map
// from those addresses to JS function names (/tmp/perf-<pid>.map), which names them here.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

/** [start, size, name] sorted by start, from a perf map (none when the file is missing). */
function readPerfMap(file) {
  if (!existsSync(file)) return [];
  const entries = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [start, size, ...name] = line.split(' ');
    if (name.length > 0) entries.push([Number.parseInt(start, 16), Number.parseInt(size, 16), name.join(' ')]);
  }
  return entries.sort((a, b) => a[0] - b[0]);
}

/** The name of the code at `addr`: the last map entry that starts at or before it and covers it. */
function nameAt(entries, addr) {
  let lo = 0;
  let hi = entries.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (entries[mid][0] <= addr) lo = mid + 1;
    else hi = mid - 1;
  }
  for (let i = hi; i >= 0 && addr - entries[i][0] < 1 << 20; i--) if (addr < entries[i][0] + entries[i][1]) return entries[i][2];
  return undefined;
}

/**
 * The `top` functions by instructions per request, as printable lines. `inclusive`: each
 * function with what it called (where a layer's cost is spread over builtins and runtime
 * functions it calls, that is its cost).
 */
export function annotate(dump, perfMap, requests, top, inclusive = false) {
  const args = ['--threshold=99.5', ...(inclusive ? ['--inclusive=yes'] : []), dump];
  const text = execFileSync('callgrind_annotate', args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  const entries = readPerfMap(perfMap);
  const byName = new Map();
  for (const line of text.split('\n')) {
    const m = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$/.exec(line);
    if (m === null || m[2] === 'PROGRAM TOTALS') continue;
    const count = Number(m[1].replaceAll(',', ''));
    const jit = /^\?\?\?:0x([0-9a-f]+)(?:'\d+)? \[\?\?\?\]$/.exec(m[2]);
    const name = jit
      ? `JS ${nameAt(entries, Number.parseInt(jit[1], 16)) ?? `0x${jit[1]}`}`
      : m[2].replace(/^\?\?\?:/, '').replace(/ \[[^\]]*\]$/, '');
    byName.set(name, (byName.get(name) ?? 0) + count);
  }
  return [...byName]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(
      ([name, count]) =>
        `${Math.round(count / requests)
          .toLocaleString('en-US')
          .padStart(9)}  ${name.slice(0, 140)}`,
    );
}
