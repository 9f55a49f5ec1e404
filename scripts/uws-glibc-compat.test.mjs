// The in-place CLI the benchmark uses for its directly loaded uWebSockets.js (the patch
// itself is tested in packages/server/test/uws/).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'scripts', 'uws-glibc-compat.mjs');
const installed = dirname(createRequire(join(root, 'packages', 'server', 'package.json')).resolve('uWebSockets.js'));
const name = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
const shipped = readFileSync(
  existsSync(join(installed, `${name}.glibc238.orig`)) ? join(installed, `${name}.glibc238.orig`) : join(installed, name),
);
const work = mkdtempSync(join(tmpdir(), 'uws-cli-'));
after(() => rmSync(work, { recursive: true, force: true }));

test('the CLI makes a shipped install loadable, keeps the original, and is idempotent', () => {
  const pkg = join(work, 'node_modules', 'uWebSockets.js');
  mkdirSync(pkg, { recursive: true });
  for (const f of ['package.json', 'uws.js']) copyFileSync(join(installed, f), join(pkg, f));
  writeFileSync(join(pkg, name), shipped);
  const first = spawnSync(process.execPath, [cli, join(work, 'node_modules')], { encoding: 'utf8' });
  assert.equal(first.status, 0, first.stderr);
  assert.match(first.stdout, /patched .*it loads|loads; nothing to do/);
  const load = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(pkg)}).App()`], { encoding: 'utf8' });
  assert.equal(load.status, 0, load.stderr);
  if (/patched/.test(first.stdout)) assert.ok(readFileSync(join(pkg, `${name}.glibc238.orig`)).equals(shipped));
  const second = spawnSync(process.execPath, [cli, join(work, 'node_modules')], { encoding: 'utf8' });
  assert.equal(second.status, 0, second.stderr);
  assert.match(second.stdout, /nothing to do/);
});

test('the CLI refuses a binary that fails for another reason', () => {
  const pkg = join(work, 'bad', 'node_modules', 'uWebSockets.js');
  mkdirSync(pkg, { recursive: true });
  for (const f of ['package.json', 'uws.js']) copyFileSync(join(installed, f), join(pkg, f));
  writeFileSync(join(pkg, name), 'garbage');
  const out = spawnSync(process.execPath, [cli, join(work, 'bad', 'node_modules')], { encoding: 'utf8' });
  assert.equal(out.status, 1);
  assert.match(out.stderr, /another reason; not patching/);
});
