// Debian's `chromium` for the browser tests (scripts/chromium.ts), driven by playwright-core
// from the Kit 3 fixture's install.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

import { ensureChromium } from '../../../../scripts/chromium.ts';

export { ensureChromium };

/** playwright-core, from the Kit 3 fixture's node_modules (kept out of the root install). */
export function playwright(): typeof import('playwright-core') {
  const require = createRequire(fileURLToPath(new URL('../fixture/kit3/package.json', import.meta.url)));
  return require('playwright-core');
}

/** Debian's chromium, headless, as the browser tests run it (no sandbox: CI runs as root). */
export function launchChromium(): Promise<import('playwright-core').Browser> {
  return playwright().chromium.launch({
    executablePath: ensureChromium(),
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}
