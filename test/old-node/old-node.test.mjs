// On a Node older than the packages support (the system Node at /usr/bin/node, 20 on Debian
// 12; skipped where it is 22 or newer): the built packages (dist, as published) say what is
// needed in one line instead of failing deep inside, and the repository's install says in one
// line why it works anyway (.npmrc, scripts/npm-node.mjs).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OLD = process.env.OLD_NODE ?? '/usr/bin/node';
const version = spawnSync(OLD, ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '';
const skip = !/^v\d+/.test(version) || Number(version.slice(1).split('.')[0]) >= 22 ? `no Node < 22 at ${OLD}` : false;
const dist = (pkg) => pathToFileURL(join(ROOT, 'packages', pkg, 'dist', 'index.js')).href;
const run = (code) => spawnSync(OLD, ['--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8', timeout: 20_000 });

describe(`on ${version || 'an old Node'}`, { skip }, () => {
  test('importing @tachyon/server exits 1 with one line saying what is needed', () => {
    const r = run(`import ${JSON.stringify(dist('server'))};\nconsole.log('not reached');`);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr,
      `@tachyon/server needs Node.js 22 or newer; this is Node.js ${version} (${OLD}). Install Node.js 22+ (e.g. nvm install 24) and run again.\n`,
    );
  });

  test('@tachyon/client without a WebSocket says so and how to pass one', () => {
    const r = run(
      `import { connect } from ${JSON.stringify(dist('client'))};\ntry { connect('ws://127.0.0.1:1/'); } catch (e) { console.log(e.name + ': ' + e.message); }`,
    );
    assert.equal(r.status, 0, r.stderr);
    assert.equal(
      r.stdout.trim(),
      // Shortened in the client's 3 KB budget (docs/client.md, Size): what is missing, and the fix.
      'TypeError: @tachyon/client: no global WebSocket (Node.js < 22): pass connect(url, { WebSocket })',
    );
  });

  test('@tachyon/client with a WebSocket passed in works there', () => {
    // A constructor that records the URL stands in for the ws package (not installed here).
    const r = run(`import { connect } from ${JSON.stringify(dist('client'))};
class FakeWebSocket { constructor(url) { console.log('opened ' + url); } close() {} }
const live = connect('ws://127.0.0.1:1/x', { WebSocket: FakeWebSocket, maxRetries: 0 });
live.close();`);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^opened ws:\/\/127\.0\.0\.1:1\/x$/m);
  });

  test("the root install's preinstall explains npm's old Node in one line", () => {
    const r = spawnSync(OLD, [join(ROOT, 'scripts', 'npm-node.mjs')], {
      encoding: 'utf8',
      env: { ...process.env, npm_config_user_agent: `npm/11.0.0 node/${version} linux x64 workspaces/false` },
    });
    assert.equal(r.status, 0);
    assert.equal(r.stdout.split('\n').filter(Boolean).length, 1);
    assert.match(
      r.stdout,
      new RegExp(
        `npm runs on Node ${version.replace(/\./g, '\\.')}, older than the packages need \\(>= 22\\); this repository's scripts use the pinned Node 24`,
      ),
    );
    // On the pinned Node with a current npm: nothing.
    const quiet = spawnSync(process.execPath, [join(ROOT, 'scripts', 'npm-node.mjs')], {
      encoding: 'utf8',
      env: { ...process.env, npm_config_user_agent: `npm/11.0.0 node/${process.version} linux x64` },
    });
    assert.equal(quiet.stdout, '');
  });
});
