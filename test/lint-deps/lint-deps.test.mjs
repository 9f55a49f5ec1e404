// Proves the folder rules of .dependency-cruiser.cjs fire: a tiny packages/server/src in a
// temporary directory, with one import pointing right, a type-only cycle between two files
// and uWebSockets.js imported outside uws/, must fail `depcruise` with each rule named; the
// same tree without them must pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const depcruise = join(root, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');

function cruise(files) {
  const dir = mkdtempSync(join(tmpdir(), 'tachyon-lint-deps-'));
  try {
    const tsconfig = {
      compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', allowImportingTsExtensions: true, noEmit: true },
      include: ['src'],
    };
    files['packages/server/tsconfig.json'] = JSON.stringify(tsconfig);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const r = spawnSync(process.execPath, [depcruise, 'packages/server/src', '--config', join(root, '.dependency-cruiser.cjs')], {
      cwd: dir,
      encoding: 'utf8',
    });
    return { status: r.status, output: r.stdout + r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const clean = {
  'packages/server/src/uws/index.ts': "export type { TemplatedApp } from 'uWebSockets.js';\nexport const uws = 1;\n",
  'packages/server/src/core/settings.ts':
    "import { uws } from '../uws/index.ts';\nexport interface Settings { n: number }\nexport const n = uws;\n",
  'packages/server/src/http/request.ts':
    "import type { Settings } from '../core/settings.ts';\nexport const read = (s: Settings) => s.n;\n",
};

test('a tree that points one way passes', () => {
  const r = cruise({ ...clean });
  assert.equal(r.status, 0, r.output);
});

test('an import to the right, a type-only file cycle and uWebSockets.js outside uws/ each fail', () => {
  const r = cruise({
    ...clean,
    // core/ reaching up into http/ (type-only: still a dependency)
    'packages/server/src/core/settings.ts':
      "import type { Log } from '../http/log.ts';\nexport interface Settings { n: number; log?: Log }\n",
    'packages/server/src/http/log.ts': "import type { Request } from './request.ts';\nexport type Log = (r: Request) => void;\n",
    // request.ts <-> log.ts: a cycle of type-only imports
    'packages/server/src/http/request.ts': "import type { Log } from './log.ts';\nexport interface Request { log: Log }\n",
    'packages/server/src/routing/router.ts': "import type { TemplatedApp } from 'uWebSockets.js';\nexport type Uws = TemplatedApp;\n",
  });
  assert.notEqual(r.status, 0, r.output);
  assert.match(r.output, /core-points-left: packages\/server\/src\/core\/settings\.ts → packages\/server\/src\/http\/log\.ts/);
  assert.match(r.output, /no-circular: packages\/server\/src\/http\/(log|request)\.ts/);
  assert.match(r.output, /only-uws-loads-uws: packages\/server\/src\/routing\/router\.ts → uWebSockets\.js/);
});
