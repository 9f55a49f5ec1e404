#!/usr/bin/env node
// In-place glibc fix for a uWebSockets.js install that is loaded directly, not through
// @tachyon/server (the benchmark's raw uWS, hyper-express, ultimate-express and Socket.IO
// peers in bench/node_modules). @tachyon/server applies the same fix by itself at load time,
// into a cache directory (packages/server/src/uws/load.ts); the patch logic lives beside it.
//
//   node scripts/uws-glibc-compat.mjs [node_modules dir]   (default: bench/node_modules)
//
// It patches only when loading fails with exactly "GLIBC_2.38 not found", keeps the shipped
// binary beside it (*.glibc238.orig), and checks the result loads.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isGlibc238Error, patchBuffer } from '../packages/server/src/uws/glibc-compat.ts';

const BACKUP_SUFFIX = '.glibc238.orig';
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Loads the package in a fresh process; '' on success, else the error text. */
function tryLoad(packageDir) {
  const code = `try { require(${JSON.stringify(packageDir)}); } catch (e) { process.stderr.write(String(e && e.message)); process.exit(1); }`;
  const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8' });
  return r.status === 0 ? '' : r.stderr || `exit ${r.status}`;
}

/** Makes nodeModules/uWebSockets.js loadable here; returns a one-line report. Throws if it can't. */
export function ensureLoadable(nodeModules) {
  const packageDir = join(nodeModules, 'uWebSockets.js');
  if (!existsSync(join(packageDir, 'package.json'))) return `no uWebSockets.js in ${nodeModules}; nothing to do`;
  const before = tryLoad(packageDir);
  if (before === '') return 'uWebSockets.js loads; nothing to do';
  if (!isGlibc238Error(before)) throw new Error(`uWebSockets.js fails to load for another reason; not patching:\n${before}`);
  const prefix = `uws_${process.platform}_${process.arch}_`;
  for (const file of readdirSync(packageDir).filter((f) => f.startsWith(prefix) && f.endsWith('.node'))) {
    const path = join(packageDir, file);
    const patched = patchBuffer(readFileSync(path));
    if (!patched) continue;
    if (!existsSync(path + BACKUP_SUFFIX)) copyFileSync(path, path + BACKUP_SUFFIX);
    writeFileSync(path, patched);
  }
  const after = tryLoad(packageDir);
  if (after !== '') throw new Error(`the patched binary still fails to load:\n${after}`);
  return `patched ${packageDir} for this glibc (originals kept as *${BACKUP_SUFFIX}); it loads under Node ${process.version}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  try {
    console.log(`[uws-glibc-compat] ${ensureLoadable(resolve(process.argv[2] ?? join(ROOT, 'bench', 'node_modules')))}`);
  } catch (error) {
    console.error(`[uws-glibc-compat] ${error.message}`);
    process.exitCode = 1;
  }
}
