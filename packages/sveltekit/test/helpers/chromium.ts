// Debian's `chromium` for the browser tests (scripts/chromium.ts), driven by playwright-core
// from the Kit 3 fixture's install.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export { ensureChromium } from '../../../../scripts/chromium.ts';

/** playwright-core, from the Kit 3 fixture's node_modules (kept out of the root install). */
export function playwright(): typeof import('playwright-core') {
  const require = createRequire(fileURLToPath(new URL('../fixture/kit3/package.json', import.meta.url)));
  return require('playwright-core');
}
