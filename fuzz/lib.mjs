// Shared by the fuzz targets: the property checks every target makes besides "no crash".
import { performance } from 'node:perf_hooks';

/** No call may take longer than this (docs/security.md): superlinear work shows up as an outlier. */
export const OUTLIER_MS = 100;
let calls = 0;

/**
 * Runs one call and fails on a slow one. The first calls are not timed: they include the JIT
 * warming up and the lazy module loading of a fresh process. A call slow by the clock is run
 * twice more, timed by the CPU time the process spent, and fails only when both reruns are
 * slow too: work superlinear in the input costs CPU every time; a garbage-collection pause or
 * a busy machine (a fuzz run under `nice` waits for the CPU for hundreds of ms: the false
 * finding of 2026-11-27 took 418 ms by the clock and 0.7 ms alone) does not.
 */
export function timed(label, fn) {
  const start = performance.now();
  let out = fn();
  const ms = performance.now() - start;
  if (++calls <= 50 || ms <= OUTLIER_MS) return out;
  for (let attempt = 1; ; attempt++) {
    const cpu0 = process.cpuUsage();
    out = fn();
    const cpu = cpuMs(cpu0);
    if (cpu <= OUTLIER_MS) return out;
    if (attempt === 2)
      throw new Error(`${label} took ${ms.toFixed(1)} ms, then ${cpu.toFixed(1)} ms of CPU twice (limit ${OUTLIER_MS} ms)`);
  }
}

/** CPU milliseconds (user + system) the process spent since `since`. */
function cpuMs(since) {
  const { user, system } = process.cpuUsage(since);
  return (user + system) / 1000;
}

/** The async form of timed() (multipart, the client's frames): `fn` must be safe to run again. */
export async function timedAsync(label, fn) {
  const start = performance.now();
  let out = await fn();
  const ms = performance.now() - start;
  if (++calls <= 50 || ms <= OUTLIER_MS) return out;
  for (let attempt = 1; ; attempt++) {
    const cpu0 = process.cpuUsage();
    out = await fn();
    const cpu = cpuMs(cpu0);
    if (cpu <= OUTLIER_MS) return out;
    if (attempt === 2)
      throw new Error(`${label} took ${ms.toFixed(1)} ms, then ${cpu.toFixed(1)} ms of CPU twice (limit ${OUTLIER_MS} ms)`);
  }
}

/** Rethrows anything that is not one of the documented error types (the finding). */
export function onlyDocumented(err, types, check) {
  if (types.some((t) => err instanceof t) && (check === undefined || check(err))) return;
  throw new Error(`undocumented error: ${err?.constructor?.name}: ${err?.message}`, { cause: err });
}

export function assert(ok, message) {
  if (!ok) throw new Error(`property violated: ${message}`);
}

/** A record whose prototype chain holds no Object.prototype (core/dict.ts). */
export function prototypeFree(record) {
  for (let p = Object.getPrototypeOf(record); p !== null; p = Object.getPrototypeOf(p)) if (p === Object.prototype) return false;
  return true;
}
