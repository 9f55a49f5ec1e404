#!/usr/bin/env node
// Copies uPlot (a devDependency) into vendor/ at build time: the published package serves it
// from there, and the page never loads anything from a CDN.
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const dist = dirname(require.resolve('uplot/dist/uPlot.iife.min.js'));
const out = new URL('../vendor/', import.meta.url).pathname;
mkdirSync(out, { recursive: true });
for (const name of ['uPlot.iife.min.js', 'uPlot.min.css']) copyFileSync(join(dist, name), join(out, name));
copyFileSync(join(dist, '..', 'LICENSE'), join(out, 'uPlot.LICENSE'));
console.log(`vendored uPlot into ${out}`);
