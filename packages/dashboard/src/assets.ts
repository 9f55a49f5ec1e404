// The page, its script and style, and uPlot (vendored into vendor/ at build time from
// node_modules by scripts/vendor.mjs: no CDN), read once when the dashboard is registered and
// served from memory with a strict Content-Security-Policy: scripts, styles and the WebSocket
// from this origin only, nothing inline.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** Inline nothing; the page connects to its own origin only (CSP 'self' covers ws:/wss: of it). */
export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export interface Asset {
  readonly type: string;
  readonly body: string;
}

const page = (name: string) => readFileSync(new URL(`../page/${name}`, import.meta.url), 'utf8');

/** uPlot from vendor/ (the published package), or from node_modules in this repository. */
function uplot(name: string): string {
  try {
    return readFileSync(new URL(`../vendor/${name}`, import.meta.url), 'utf8');
  } catch {
    try {
      return readFileSync(createRequire(import.meta.url).resolve(`uplot/dist/${name}`), 'utf8');
    } catch {
      throw new Error(`dashboard(): uPlot's ${name} is missing: build the package (npm run build -w @tachyon/dashboard)`);
    }
  }
}

/** The files under `base`, by the path they are served at. */
export function loadAssets(base: string): Map<string, Asset> {
  const html = page('index.html').replaceAll('{{base}}', base);
  return new Map([
    [base, { type: 'text/html; charset=utf-8', body: html }],
    [`${base}/dashboard.js`, { type: 'text/javascript; charset=utf-8', body: page('dashboard.js') }],
    [`${base}/dashboard.css`, { type: 'text/css; charset=utf-8', body: page('dashboard.css') }],
    [`${base}/uplot.js`, { type: 'text/javascript; charset=utf-8', body: uplot('uPlot.iife.min.js') }],
    [`${base}/uplot.css`, { type: 'text/css; charset=utf-8', body: uplot('uPlot.min.css') }],
  ]);
}
