// The adapter's own build of src/hooks.ws (apps without the tachyon() Vite plugin), with the
// Vite of each fixture: Vite 7 (Rollup, Kit 2's fixture) and Vite 8 (Rolldown, Kit 3's).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { compileHooks, type CompileHooksOptions } from '../src/adapter/compile-hooks.ts';
import { installFixture, type KitVersion } from './helpers/fixture.ts';

function project(kit: KitVersion, files: Record<string, string>): string {
  // Inside the fixture, so that `vite` resolves from its node_modules as the app's would.
  const root = join(installFixture(kit), `.hooks-test-${process.pid}`);
  rmSync(root, { recursive: true, force: true });
  for (const [name, text] of Object.entries({ 'package.json': '{"type":"module"}', ...files })) {
    mkdirSync(join(root, name, '..'), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  return root;
}

function options(root: string): CompileHooksOptions {
  return {
    root,
    file: join(root, 'src/hooks.ws.ts'),
    outDir: join(root, 'out'),
    name: 'hooks',
    lib: 'src/lib',
    alias: { $db: 'src/db' },
    publicPrefix: 'PUBLIC_',
    privatePrefix: '',
    version: 'v42',
  };
}

for (const kit of ['kit2', 'kit3'] as const) {
  describe(`compileHooks with ${kit}'s Vite`, { timeout: 120_000 }, () => {
    let root = '';
    after(() => rmSync(root, { recursive: true, force: true }));

    it('compiles TypeScript with $lib, kit.alias, $env/* and $app/environment', async () => {
      root = project(kit, {
        '.env': 'SECRET_NAME=from-dotenv\nPUBLIC_GREETING=hi\n',
        'src/lib/util.ts': 'export const twice = (n: number): number => n * 2;\n',
        'src/db/index.ts': "export const table = 'users';\n",
        'src/hooks.ws.ts': [
          "import { twice } from '$lib/util';",
          "import { table } from '$db';",
          "import { SECRET_NAME } from '$env/static/private';",
          "import { PUBLIC_GREETING } from '$env/static/public';",
          "import { env } from '$env/dynamic/private';",
          "import { version, dev, building } from '$app/environment';",
          'export const facts = { two: twice(1), table, SECRET_NAME, PUBLIC_GREETING, dynamic: typeof env, version, dev, building };',
          'export function open(): void {}',
        ].join('\n'),
      });
      await compileHooks(options(root));
      const mod = await import(pathToFileURL(join(root, 'out/hooks.js')).href);
      assert.equal(typeof mod.open, 'function');
      assert.deepEqual(mod.facts, {
        two: 2,
        table: 'users',
        SECRET_NAME: 'from-dotenv',
        PUBLIC_GREETING: 'hi',
        dynamic: 'object',
        version: 'v42',
        dev: false,
        building: false,
      });
    });

    it('refuses a SvelteKit module it cannot provide, pointing at the plugin', async () => {
      root = project(kit, { 'src/hooks.ws.ts': "import { read } from '$app/server';\nexport const r = read;\n" });
      await assert.rejects(compileHooks(options(root)), /src\/hooks\.ws imports \$app\/server[\s\S]*tachyon\(\)/);
    });
  });
}

describe('compileHooks without Vite', () => {
  it('says vite is missing', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tachyon-no-vite-'));
    try {
      await assert.rejects(compileHooks({ ...options(root), file: join(root, 'x.ts') }), /vite is not installed in/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
