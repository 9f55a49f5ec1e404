// Debian's `chromium` for the browser tests: installed with apt-get when missing (the
// tests run as root on CI machines; browser downloads are not used), driven by
// playwright-core from the Kit 3 fixture's install.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium'];

function found(): string | undefined {
  return CANDIDATES.find((p) => existsSync(p));
}

/** The chromium executable; installs Debian's package first when it is missing. */
export function ensureChromium(): string {
  let path = found();
  if (path !== undefined) return path;
  if (process.getuid?.() !== 0)
    throw new Error('chromium is not installed and the tests are not running as root: apt-get install chromium');
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', 'chromium'],
  ]) {
    const r = spawnSync('apt-get', args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (r.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (exit ${r.status})`);
  }
  path = found();
  if (path === undefined) throw new Error('apt-get installed chromium but no executable was found');
  return path;
}

/** playwright-core, from the Kit 3 fixture's node_modules (kept out of the root install). */
export function playwright(): typeof import('playwright-core') {
  const require = createRequire(fileURLToPath(new URL('../fixture/kit3/package.json', import.meta.url)));
  return require('playwright-core');
}
