// The benchmark's own dependencies (peers, runtimes, raw uWebSockets.js) install here, in
// bench/node_modules, on the first run that needs them: they are not part of the default
// `npm install`, which stays lean (the framework, its tests and the demo only).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { BENCH_DIR } from './util.mjs';
import { ensureLoadable } from '../../scripts/uws-glibc-compat.mjs';

/** Installs bench/package.json's dependencies when `missing` is non-empty; makes uWS loadable. */
export function ensureBenchInstall(missing, log) {
  if (missing.length) {
    log(
      `bench: ${missing.join(', ')} not installed; installing the benchmark's dependencies (exact versions in bench/package.json) with \`npm install\` in bench/ (about 600 MB, once)`,
    );
    const npm = path.join(path.dirname(process.execPath), 'npm');
    const t0 = Date.now();
    const r = spawnSync(existsSync(npm) ? npm : 'npm', ['install', '--no-audit', '--no-fund', '--install-links=false'], {
      cwd: BENCH_DIR,
      stdio: 'inherit',
    });
    if (r.status !== 0) {
      log(
        `bench: npm install in bench/ failed (${r.error?.message ?? `exit ${r.status}`}); the peers that need ${missing.join(', ')} will be reported unavailable`,
      );
      return;
    }
    log(`bench: installed in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  // Raw uWS and the peers built on it load the addon directly, not through @tachyon/server's
  // loader, so on glibc < 2.38 their copy is patched in place (originals kept beside it).
  try {
    const report = ensureLoadable(path.join(BENCH_DIR, 'node_modules'));
    if (!report.endsWith('nothing to do')) log(`bench: ${report}`);
  } catch (error) {
    log(`bench: ${error.message}`);
  }
}
