// Debian's chromium for the browser tests (the typing race, the OpenAPI reference page, the
// SvelteKit adapter): installed with apt-get when missing (the tests run as root on CI
// machines; browser downloads are not used here), driven by playwright-core.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium'];

const found = (): string | undefined => CANDIDATES.find((p) => existsSync(p));

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
