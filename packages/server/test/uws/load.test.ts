// Loading the addon from an install that looks like a user's: a fresh copy of the registry
// package in a temporary app outside the repository, each load in a fresh process.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { requiredGlibcVersions } from '../../src/uws/glibc-compat.ts';

const loader = fileURLToPath(new URL('../../src/uws/load.ts', import.meta.url));
const installed = dirname(createRequire(import.meta.url).resolve('uWebSockets.js'));
const name = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
const shipped = readFileSync(
  existsSync(join(installed, `${name}.glibc238.orig`)) ? join(installed, `${name}.glibc238.orig`) : join(installed, name),
);
const glibcTooOld =
  requiredGlibcVersions(shipped).includes('GLIBC_2.38') &&
  !/^2\.(3[89]|[4-9]\d)/.test(String((process.report.getReport() as any).header.glibcVersionRuntime));
const work = mkdtempSync(join(tmpdir(), 'tachyon-uws-load-'));
after(() => {
  chmodSync(work, 0o700);
  rmSync(work, { recursive: true, force: true });
});

/** A temporary app with node_modules/uWebSockets.js as the registry ships it (only this ABI's binary). */
function fakeApp(label: string, binary: Buffer | null = shipped): string {
  const app = join(work, label);
  const pkg = join(app, 'node_modules', 'uWebSockets.js');
  mkdirSync(pkg, { recursive: true });
  for (const file of ['package.json', 'uws.js', 'ESM_wrapper.mjs']) copyFileSync(join(installed, file), join(pkg, file));
  if (binary) writeFileSync(join(pkg, name), binary);
  writeFileSync(join(app, 'index.js'), '');
  return app;
}

/** Loads through the loader in a fresh process and serves one real request with it. */
function load(app: string, env: Record<string, string | undefined> = {}) {
  const script = `
    import { loadAddon } from ${JSON.stringify(pathToFileURL(loader).href)};
    const uws = loadAddon(${JSON.stringify(pathToFileURL(join(app, 'index.js')).href)});
    const server = uws.App().post('/echo', (res) => {
      let n = 0; res.onAborted(() => {});
      res.onData((ab, last) => { n += ab.byteLength; if (last) res.end('got ' + n); });
    });
    server.listen('127.0.0.1', 0, async (ls) => {
      const r = await fetch('http://127.0.0.1:' + uws.us_socket_local_port(ls) + '/echo', { method: 'POST', body: 'x'.repeat(12345) });
      console.log(await r.text());
      uws.us_listen_socket_close(ls); server.close();
    });`;
  const childEnv: NodeJS.ProcessEnv = { ...process.env, TACHYON_UWS_CACHE: undefined, XDG_CACHE_HOME: join(work, 'xdg'), ...env };
  for (const [k, v] of Object.entries(childEnv)) if (v === undefined) delete childEnv[k];
  return spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000, env: childEnv });
}

const cacheOf = (app: string) => join(app, 'node_modules', '.cache', 'tachyon-uws');

describe('loading uWebSockets.js', () => {
  test('a fresh install on this glibc loads (patched copy in node_modules/.cache), node_modules untouched', {
    skip: !glibcTooOld && 'glibc >= 2.38 here: the shipped binary loads as is',
  }, () => {
    const app = fakeApp('fresh');
    const out = load(app);
    assert.equal(out.status, 0, out.stderr);
    assert.equal(out.stdout.trim(), 'got 12345');
    const cached = readdirSync(cacheOf(app));
    assert.equal(cached.length, 1);
    assert.match(cached[0]!, /-glibc-compat-[0-9a-f]{16}\.node$/);
    assert.ok(readFileSync(join(app, 'node_modules', 'uWebSockets.js', name)).equals(shipped), 'the installed package is unchanged');
    // The second process reuses the copy as is.
    const before = statSync(join(cacheOf(app), cached[0]!)).mtimeMs;
    const again = load(app);
    assert.equal(again.status, 0, again.stderr);
    assert.equal(statSync(join(cacheOf(app), cached[0]!)).mtimeMs, before);
  });

  test('a tampered or truncated cached copy is replaced, not loaded', { skip: !glibcTooOld && 'glibc >= 2.38 here' }, () => {
    const app = fakeApp('tampered');
    assert.equal(load(app).status, 0);
    const file = join(cacheOf(app), readdirSync(cacheOf(app))[0]!);
    writeFileSync(file, readFileSync(file).subarray(0, 1000));
    const out = load(app);
    assert.equal(out.status, 0, out.stderr);
    assert.equal(readFileSync(file).length, shipped.length);
  });

  test('an unwritable node_modules falls back to the user cache; TACHYON_UWS_CACHE comes first', {
    skip: !glibcTooOld && 'glibc >= 2.38 here',
  }, () => {
    const app = fakeApp('readonly');
    // A file where the cache directory would go: mkdir fails (chmod alone does not stop root).
    writeFileSync(join(app, 'node_modules', '.cache'), 'not a directory');
    const xdg = join(work, 'xdg-readonly');
    const out = load(app, { XDG_CACHE_HOME: xdg, TACHYON_UWS_CACHE: '/dev/null/not-a-dir' });
    assert.equal(out.status, 0, out.stderr);
    assert.equal(readdirSync(join(xdg, 'tachyon', 'uws')).length, 1);

    const chosen = join(work, 'chosen-cache');
    const out2 = load(fakeApp('env'), { TACHYON_UWS_CACHE: chosen });
    assert.equal(out2.status, 0, out2.stderr);
    assert.equal(readdirSync(chosen).length, 1);
  });

  test('a missing binary names the platform, the Node ABI and what to do', () => {
    const out = load(fakeApp('missing', null));
    assert.notEqual(out.status, 0);
    assert.match(out.stderr, new RegExp(`could not load uWebSockets.js on ${process.platform}-${process.arch}`));
    assert.match(out.stderr, new RegExp(`ABI ${process.versions.modules}`));
    assert.match(out.stderr, /is missing from/);
    assert.match(out.stderr, /What to do: /);
    assert.doesNotMatch(out.stderr, /supports only Node.js versions/, "the wrapper's misleading text is not the headline");
  });

  test('a corrupt binary is not patched: a clear error with the cause', () => {
    const out = load(fakeApp('corrupt', Buffer.from('definitely not a shared object')));
    assert.notEqual(out.status, 0);
    assert.match(out.stderr, /Cause: .*(invalid ELF header|too short|file too short)/);
    assert.match(out.stderr, /What to do: Reinstall/);
  });

  test('uWebSockets.js not installed at all', () => {
    const app = join(work, 'none');
    mkdirSync(app, { recursive: true });
    writeFileSync(join(app, 'index.js'), '');
    const out = load(app);
    assert.notEqual(out.status, 0);
    assert.match(out.stderr, /uWebSockets\.js is not installed/);
  });
});
