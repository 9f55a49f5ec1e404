// Loads the uWebSockets.js addon, and applies the one fix we know is safe when it fails to load.
//
// The fix (glibc-compat.ts) is applied here, at first load, into a cache directory we own,
// rather than at install time: npm >= 11, pnpm, Yarn Berry and Bun skip dependencies' install
// scripts by default, so an install step would silently not run; node_modules may be
// read-only (Docker layers, Nix, CI caches); and the installed package stays byte-for-byte
// what the registry served (lockfile integrity holds). The cost is paid only where the
// shipped binary fails to load: one failed dlopen, a read and patch of ~5 MB (~10 ms), then
// the cached copy is loaded.
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { GLIBC_NEEDED, isGlibc238Error, patchBuffer } from './glibc-compat.ts';

const PACKAGE = 'uWebSockets.js';
/** Node ABIs (process.versions.modules) the pinned uWebSockets.js 20.57.0 ships binaries for. */
const SHIPPED_ABIS: Record<string, string> = { '115': '20', '127': '22', '137': '24', '141': '25' };
export const CACHE_ENV = 'TACHYON_UWS_CACHE';

/**
 * Loads uWebSockets.js as resolved from `from` (a file URL or path; default: this module).
 * Throws an error naming the platform, the Node ABI and what to do when it can't.
 */
export function loadAddon<T>(from: string | URL = import.meta.url): T {
  const require = createRequire(from);
  let entry: string;
  try {
    entry = require.resolve(PACKAGE);
  } catch {
    throw loadFailure(
      `${PACKAGE} is not installed next to @tachyon/server.`,
      'Reinstall your dependencies (npm install); @tachyon/server depends on it.',
    );
  }
  try {
    return require(entry) as T;
  } catch (error) {
    const message = messageOf(error);
    if (!isGlibc238Error(message)) throw explain(message, dirname(entry));
    return loadPatched<T>(dirname(entry), message);
  }
}

function binaryName(): string {
  return `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
}

function loadPatched<T>(packageDir: string, firstError: string): T {
  const original = readFileSync(join(packageDir, binaryName()));
  let patched: Buffer | null;
  try {
    patched = patchBuffer(original);
  } catch (error) {
    throw loadFailure(`the addon needs ${GLIBC_NEEDED} and the compatibility fix does not apply: ${messageOf(error)}`, upgradeGlibc());
  }
  if (!patched) throw explain(firstError, packageDir);
  const digest = createHash('sha256').update(patched).digest('hex').slice(0, 16);
  const fileName = binaryName().replace(/\.node$/, `-glibc-compat-${digest}.node`);
  const failures: string[] = [];
  for (const dir of cacheDirectories(packageDir)) {
    let file: string;
    try {
      file = ensureCached(dir, fileName, patched);
    } catch (error) {
      failures.push(`${dir}: ${messageOf(error)}`);
      continue;
    }
    const module = { exports: {} as T };
    try {
      process.dlopen(module, file);
    } catch (error) {
      throw loadFailure(`the glibc-compatible copy (${file}) fails to load too: ${messageOf(error)}`, upgradeGlibc());
    }
    return module.exports;
  }
  throw loadFailure(
    `the addon needs ${GLIBC_NEEDED}; Tachyon can make a compatible copy but found no writable cache directory:\n  ${failures.join('\n  ')}`,
    `Set ${CACHE_ENV} to a directory this user can write, or run on glibc >= 2.38.`,
  );
}

/**
 * Where the compatible copy goes, in order: $TACHYON_UWS_CACHE; node_modules/.cache (where
 * tools keep derived files, removed with node_modules); the user's cache directory; a
 * per-user directory in tmp.
 */
export function cacheDirectories(packageDir: string): string[] {
  const dirs: string[] = [];
  const fromEnv = process.env[CACHE_ENV];
  if (fromEnv) dirs.push(fromEnv);
  const marker = `${sep}node_modules${sep}`;
  const at = packageDir.indexOf(marker);
  if (at >= 0) dirs.push(join(packageDir.slice(0, at + marker.length), '.cache', 'tachyon-uws'));
  const xdg = process.env.XDG_CACHE_HOME;
  const home = homedir();
  if (xdg) dirs.push(join(xdg, 'tachyon', 'uws'));
  else if (home) dirs.push(join(home, '.cache', 'tachyon', 'uws'));
  dirs.push(join(tmpdir(), `tachyon-uws-${process.getuid?.() ?? 'user'}`));
  return dirs;
}

/** Writes `bytes` to dir/name unless an identical file is there; returns the path. */
function ensureCached(dir: string, name: string, bytes: Buffer): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // A shared directory (tmp) could hold a file planted by another user: only trust our own.
  const uid = process.getuid?.();
  if (uid !== undefined && lstatSync(dir).uid !== uid) throw new Error('owned by another user');
  const file = join(dir, name);
  // The content is compared, not just the name: a truncated or tampered copy is replaced.
  if (existsSync(file) && lstatSync(file).isFile() && readFileSync(file).equals(bytes)) return file;
  // Write-then-rename, so concurrent first loads (workers, test runners) never see half a file.
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    writeFileSync(temp, bytes, { mode: 0o600 });
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  return file;
}

function explain(message: string, packageDir: string): Error {
  const cause = message.replace(/^This version of uWS\.js[^\n]*\n\n/, '');
  if (!existsSync(join(packageDir, binaryName()))) {
    const supported = Object.entries(SHIPPED_ABIS)
      .map(([abi, node]) => `Node ${node} (ABI ${abi})`)
      .join(', ');
    const what = SHIPPED_ABIS[process.versions.modules]
      ? `The package has no binary for ${process.platform}-${process.arch}: uWebSockets.js supports Linux (glibc), macOS and Windows on x64 and arm64.`
      : `Use a Node version uWebSockets.js 20.57.0 ships binaries for: ${supported}.`;
    return loadFailure(`${binaryName()} is missing from ${packageDir}.`, what);
  }
  if (process.platform === 'linux' && glibcVersion() === undefined) {
    return loadFailure(
      `${cause}`,
      'This looks like a musl libc system (Alpine): uWebSockets.js needs glibc. Use a Debian/Ubuntu-based image such as node:24-bookworm-slim.',
    );
  }
  if (/GLIBC_[\d.]+' not found/.test(cause)) return loadFailure(cause, upgradeGlibc());
  return loadFailure(cause, 'Reinstall dependencies (rm -rf node_modules && npm install); if it persists, report it with this message.');
}

function upgradeGlibc(): string {
  return `Run on a system with a newer glibc (this one has ${glibcVersion() ?? 'none'}), or set ${CACHE_ENV} and retry.`;
}

function glibcVersion(): string | undefined {
  if (process.platform !== 'linux') return undefined;
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return header?.glibcVersionRuntime;
}

function loadFailure(reason: string, whatToDo: string): Error {
  const libc = process.platform === 'linux' ? ` (glibc ${glibcVersion() ?? 'not found'})` : '';
  return new Error(
    `Tachyon could not load uWebSockets.js on ${process.platform}-${process.arch}${libc}, Node ${process.version} (ABI ${process.versions.modules}).\n` +
      `Cause: ${reason}\nWhat to do: ${whatToDo}`,
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
