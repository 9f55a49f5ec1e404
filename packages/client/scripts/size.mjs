#!/usr/bin/env node
// Prints the size of @tachyon/client as shipped to browsers: esbuild --minify --bundle
// --format=esm, then gzip -9. Exits 1 when over the 3 KB budget.
// esbuild is not a dependency: install it (npm i -D esbuild) or point ESBUILD_MODULE at
// an installed copy (ESBUILD_MODULE=/tmp/sizecheck/node_modules/esbuild).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

const BUDGET = 3 * 1024;
const root = fileURLToPath(new URL('..', import.meta.url));
const dist = `${root}dist/index.js`;
const entry = existsSync(dist) ? dist : `${root}src/index.ts`;

let esbuild;
try {
  const from = process.env.ESBUILD_MODULE;
  esbuild = await import(from ? pathToFileURL(`${from}/lib/main.js`).href : 'esbuild');
  esbuild = esbuild.default ?? esbuild;
} catch {
  console.log('size: esbuild unavailable (npm i -D esbuild, or set ESBUILD_MODULE to an installed copy)');
  process.exit(0);
}

const result = await esbuild.build({ entryPoints: [entry], bundle: true, minify: true, format: 'esm', write: false, logLevel: 'silent' });
const code = result.outputFiles[0].contents;
const gz = gzipSync(code, { level: 9 }).length;
console.log(`${entry.slice(root.length)}: ${code.length} B minified, ${gz} B minified+gzip (budget ${BUDGET} B)`);
if (gz > BUDGET) {
  console.error('over budget');
  process.exit(1);
}
