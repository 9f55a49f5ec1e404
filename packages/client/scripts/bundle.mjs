#!/usr/bin/env node
// Builds the browser build of @tachyon/client, for pages without a bundler (served by
// `app.client()` in @tachyon/server, or from a CDN): minified ES modules, side by side.
//   dist/tachyon-client.min.js      the client (`connect`); the budget is 3 KB min+gzip
//   dist/tachyon-client-sse.min.js  the SSE fallback transport, which the client import()s
//                                   from its own folder only when a connection falls back
// Run after tsc (it bundles dist/*.js, so what browsers get is what Node users import).
import { writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
/** Output name (without .js) → the module it bundles. */
export const ENTRIES = { 'tachyon-client.min': 'index.js', 'tachyon-client-sse.min': 'sse.js' };

const result = await build({
  entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([out, file]) => [out, `${dist}${file}`])),
  bundle: true,
  splitting: true, // the import() of sse.js becomes an import of the sse entry's file
  outdir: dist,
  minify: true,
  format: 'esm',
  target: 'es2022',
  platform: 'browser',
  write: false,
  legalComments: 'none',
  logLevel: 'warning',
});
const names = new Set(Object.keys(ENTRIES).map((n) => `${n}.js`));
for (const file of result.outputFiles) {
  const name = basename(file.path);
  // A shared chunk would be a third file that app.client() does not serve: fail the build instead.
  if (!names.has(name)) throw new Error(`bundle: unexpected output ${name} (code shared between the entries?)`);
  writeFileSync(file.path, file.contents);
  if (process.argv.includes('--verbose'))
    console.log(`${name}: ${file.contents.length} B, ${gzipSync(file.contents, { level: 9 }).length} B gzipped`);
}
