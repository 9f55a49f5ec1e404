// Runs a scenario in a fresh Node process with --expose-gc, so memory, file descriptors and
// pending handlers can be measured after a forced collection without other tests' garbage.
// The script prints one JSON line last; that is what the test gets.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const INDEX = fileURLToPath(new URL('../../src/index.ts', import.meta.url));

/** Shared prelude: imports, and measure() = { fds, rss, heap } after gc(). */
export const PRELUDE = `
import { App } from ${JSON.stringify(INDEX)};
import { readdirSync } from 'node:fs';
import { connect } from 'node:net';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function measure() {
  for (let i = 0; i < 4; i++) { globalThis.gc(); await sleep(20); }
  const m = process.memoryUsage();
  return { fds: readdirSync('/proc/self/fd').length, rss: m.rss, heap: m.heapUsed };
}
`;

export function runChild<T>(script: string, timeout = 30_000): T {
  const out = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', PRELUDE + script], { encoding: 'utf8', timeout });
  if (out.status !== 0) throw new Error(`child failed (${out.status ?? out.signal}):\n${out.stderr}\n${out.stdout}`);
  const lines = out.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!) as T;
}
