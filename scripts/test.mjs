#!/usr/bin/env node
// `npm test`: the folder rules, build, type tests, then every test file with Node's test runner.
import { spawnSync } from 'node:child_process';
import { ensureSystemDeps } from './ensure-system-deps.mjs';

const run = (cmd, args) => {
  console.log(`\n$ ${[cmd, ...args].join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

console.log(`node ${process.version} (${process.execPath})`);
// The folders of packages/server/src point one way (.dependency-cruiser.cjs): a few seconds, first.
run('depcruise', ['packages/server/src', '--config', '.dependency-cruiser.cjs']);
// redis-server and nats-server for the bus tests (test/buses/), installed with apt when missing.
ensureSystemDeps();
run('tsc', [
  '-b',
  'packages/server',
  'packages/client',
  'packages/sveltekit',
  'packages/redis',
  'packages/nats',
  'packages/openapi',
  'packages/otel',
  'packages/dashboard',
]);
run(process.execPath, ['packages/client/scripts/bundle.mjs']);
run(process.execPath, ['packages/dashboard/scripts/vendor.mjs']);
run('tsc', ['-p', 'packages/server/test-types']);
run('tsc', ['-p', 'packages/client/test-types']);
run('tsc', ['-p', 'packages/sveltekit/test-types']);
run('tsc', ['-p', 'packages/redis/test-types']);
run('tsc', ['-p', 'packages/nats/test-types']);
run('tsc', ['-p', 'packages/openapi/test-types']);
run('tsc', ['-p', 'packages/otel/test-types']);
run('tsc', ['-p', 'packages/dashboard/test-types']);
run('tsc', ['-p', 'examples/typing-race']);
run('tsc', ['-p', 'examples/api-key-auth']);
// Every test app without a logger would print its `listening on …` line (docs/logging.md):
// warnings and errors only, unless TACHYON_LOG says otherwise. Tests that read the default
// logger's output set their child processes' environment themselves.
process.env.TACHYON_LOG ??= 'warn';
// Every test folder, strict (tsconfig.tests.json): a test that no longer type-checks fails here.
run('tsc', ['-p', 'tsconfig.tests.json']);
// The load generator's Rust tests need cargo: they run in `npm run bench:test` (CI runs both).
run(process.execPath, [
  '--test',
  '--test-reporter=spec',
  'packages/*/test/**/*.test.ts',
  'examples/*/test/**/*.test.ts',
  'scripts/*.test.mjs',
  'test/**/*.test.mjs',
  'test/**/*.test.ts',
  ...process.argv.slice(2),
]);
