#!/usr/bin/env node
// Builds dist/tachyon-client.min.js: @tachyon/client as one minified ES module, for pages
// without a bundler (served by `app.client()` in @tachyon/server, or from a CDN). Run after
// tsc (it bundles dist/index.js, so what browsers get is what Node users import).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const result = await build({
  entryPoints: [`${dist}index.js`],
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  platform: 'browser',
  write: false,
  legalComments: 'none',
  logLevel: 'warning',
});
const code = result.outputFiles[0].contents;
writeFileSync(`${dist}tachyon-client.min.js`, code);
if (process.argv.includes('--verbose'))
  console.log(`tachyon-client.min.js: ${code.length} B, ${gzipSync(code, { level: 9 }).length} B gzipped`);
