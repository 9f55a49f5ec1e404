#!/usr/bin/env node
// Prints the size of @tachyon/client as shipped to browsers: esbuild --minify --bundle
// --splitting --format=esm, then gzip -9. Exits 1 when the main entry is over the 3 KB budget;
// the SSE transport, import()ed only by a connection that falls back to it, is printed apart.
// esbuild is not a dependency: install it (npm i -D esbuild) or point ESBUILD_MODULE at
// an installed copy (ESBUILD_MODULE=/tmp/sizecheck/node_modules/esbuild).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

const BUDGET = 3 * 1024;
const root = fileURLToPath(new URL('..', import.meta.url));
const built = existsSync(`${root}dist/index.js`);
const entry = built ? `${root}dist/index.js` : `${root}src/index.ts`;

let esbuild;
try {
  const from = process.env.ESBUILD_MODULE;
  esbuild = await import(from ? pathToFileURL(`${from}/lib/main.js`).href : 'esbuild');
  esbuild = esbuild.default ?? esbuild;
} catch {
  console.log('size: esbuild unavailable (npm i -D esbuild, or set ESBUILD_MODULE to an installed copy)');
  process.exit(0);
}

const result = await esbuild.build({
  entryPoints: { index: entry },
  bundle: true,
  splitting: true,
  outdir: '/size-check', // nothing is written
  minify: true,
  format: 'esm',
  write: false,
  logLevel: 'silent',
});
let gz = 0;
for (const file of result.outputFiles) {
  const size = gzipSync(file.contents, { level: 9 }).length;
  const main = file.path.endsWith('/index.js');
  if (main) gz = size;
  const name = main ? entry.slice(root.length) : `lazy chunk ${file.path.slice(12)}`;
  console.log(`${name}: ${file.contents.length} B minified, ${size} B minified+gzip${main ? ` (budget ${BUDGET} B)` : ''}`);
}
if (gz > BUDGET) {
  console.error('over budget');
  process.exit(1);
}
