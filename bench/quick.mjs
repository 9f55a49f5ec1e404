#!/usr/bin/env node
// The quick benchmark is now a subset of the suite: `node bench/quick.mjs [options]` is
// `node bench/run.mjs --quick [options]` (see bench/README.md). Kept so that older notes and
// scripts that call this file keep working.
process.argv.splice(2, 0, '--quick');
await import('./run.mjs');
