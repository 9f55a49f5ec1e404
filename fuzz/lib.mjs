// Shared by the fuzz targets: the property checks every target makes besides "no crash".
import { performance } from 'node:perf_hooks';

/** No call may take longer than this (docs/security.md): superlinear work shows up as an outlier. */
export const OUTLIER_MS = 100;
let calls = 0;

/**
 * Runs one call and fails on a slow one. The first calls are not timed: they include the JIT
 * warming up and the lazy module loading of a fresh process. A slow call is run twice more and
 * fails only when it is slow every time: work superlinear in the input is slow on every run, a
 * garbage-collection pause or a neighbour on the machine is not.
 */
export function timed(label, fn) {
  let out;
  for (let attempt = 0; ; attempt++) {
    const start = performance.now();
    out = fn();
    const ms = performance.now() - start;
    if (++calls <= 50 || ms <= OUTLIER_MS) return out;
    if (attempt === 2) throw new Error(`${label} took ${ms.toFixed(1)} ms three times (limit ${OUTLIER_MS} ms)`);
  }
}

/** The async form of timed() (multipart, the client's frames): `fn` must be safe to run again. */
export async function timedAsync(label, fn) {
  let out;
  for (let attempt = 0; ; attempt++) {
    const start = performance.now();
    out = await fn();
    const ms = performance.now() - start;
    if (++calls <= 50 || ms <= OUTLIER_MS) return out;
    if (attempt === 2) throw new Error(`${label} took ${ms.toFixed(1)} ms three times (limit ${OUTLIER_MS} ms)`);
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
