// `npm create tachyon`: every template as a user gets it. The CLI scaffolds into a temporary
// folder outside the repository; the packed tarballs of @tachyon/server, client and sveltekit
// (npm pack, as test/consumer does) replace the registry versions; then the project's own
// scripts run as its README says: typecheck, test, start (after a build and a production-only
// prune for sveltekit, as its Dockerfile does), and the running app is requested over HTTP and
// a WebSocket. One npm cache for all (npm's default), installs offline-preferred. Bad input to
// the CLI is tested first: it needs no install.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PassThrough } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(ROOT, 'packages', 'create-tachyon', 'bin', 'create-tachyon.js');
const VERSION = JSON.parse(readFileSync(join(ROOT, 'packages', 'server', 'package.json'), 'utf8')).version;
const work = mkdtempSync(join(tmpdir(), 'create-tachyon-'));
const node = process.execPath;
// The project's npm scripts run `node`: the one running this test, first on PATH.
const env = {
  ...process.env,
  PATH: `${dirname(node)}:${process.env.PATH}`,
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
};
delete env.NODE_TEST_CONTEXT; // the project's own `node --test` must report to its own runner

function sh(cmd, args, cwd, timeout = 240_000) {
  const t0 = Date.now();
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout, env });
  const took = (Date.now() - t0) / 1000;
  assert.equal(
    r.status,
    0,
    `${cmd} ${args.join(' ')} failed (${took.toFixed(1)} s):\n${r.stdout}\n${r.stderr}${r.error ? `\n${r.error}` : ''}`,
  );
  console.log(`# ${cmd} ${args.join(' ').slice(0, 60)}: ${took.toFixed(1)} s`);
  return r;
}

/** The CLI, not in a terminal (stdin and stdout are pipes): flags are the whole input. */
function cli(args, cwd = work) {
  return spawnSync(node, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 20_000, env });
}

/** `npm start` in its own process group (npm → node), until it prints where it listens. */
async function start(cwd) {
  const proc = spawn('npm', ['start'], {
    cwd,
    env: { ...env, PORT: '0', HOST: '127.0.0.1' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
  const base = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start: no "Listening on" line in 30 s:\n${out}`)), 30_000);
    proc.stdout.on('data', () => {
      const m = /Listening on http:\/\/[^:]+:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(`http://127.0.0.1:${m[1]}`);
      }
    });
    void exited.then(() => reject(new Error(`npm start exited:\n${out}`)));
  });
  const stop = async () => {
    process.kill(-proc.pid, 'SIGTERM'); // the graceful stop `docker stop` sends
    const kill = setTimeout(() => process.kill(-proc.pid, 'SIGKILL'), 15_000);
    await exited;
    clearTimeout(kill);
  };
  return { base, stop, output: () => out };
}

/** A WebSocket round trip with the runtime's own WebSocket: subscribe, then wait for an event. */
function subscribe(url, topic) {
  const ws = new WebSocket(url);
  const events = [];
  const opened = new Promise((resolve, reject) => {
    ws.onopen = () => {
      ws.send(JSON.stringify({ type: 'subscribe', topics: [topic] }));
      resolve();
    };
    ws.onerror = () => reject(new Error(`WebSocket ${url} failed`));
  });
  ws.onmessage = (m) => events.push(JSON.parse(m.data));
  return { ws, events, opened };
}

async function waitFor(check, what, ms = 5000) {
  for (const end = Date.now() + ms; !(await check()); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  }
}

after(() => rmSync(work, { recursive: true, force: true }));

describe('create-tachyon: bad input', () => {
  test('an unknown template, option or package manager: one line naming the known ones, exit 1', () => {
    for (const [args, message] of [
      [['app1', '--template', 'nope'], /unknown template "nope" \(known: api, realtime, sveltekit\)/],
      [['app1', '--template=nope'], /unknown template "nope"/],
      [['app1', '--tempalte', 'api'], /unknown option --tempalte \(known: --template, --pm, --no-install, --help\)/],
      [['app1', '--pm', 'bun', '--template', 'api'], /unknown package manager "bun" \(known: npm, pnpm, yarn\)/],
      [['app1', '--template'], /--template needs a value/],
      [['app1', '--template', '--no-install'], /--template needs a value/],
      [['app1', 'app2', '--template', 'api'], /one folder only/],
      [['app1'], /not in a terminal: give the folder and --template/],
      [['--template', 'api'], /not in a terminal: give the folder and --template/],
    ]) {
      const r = cli(args);
      assert.equal(r.status, 1, `${args.join(' ')}: exit 1\n${r.stdout}${r.stderr}`);
      assert.match(r.stderr, message);
      assert.match(r.stderr, /^create-tachyon: /);
      assert.ok(!r.stderr.includes('    at '), `${args.join(' ')}: no stack trace\n${r.stderr}`);
    }
    assert.ok(!existsSync(join(work, 'app1')), 'nothing written');
  });

  test('a folder that is not empty is refused, untouched', () => {
    const dir = join(work, 'taken');
    mkdirSync(dir);
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    const r = cli(['taken', '--template', 'api', '--no-install']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /taken is not empty: choose a new folder/);
    assert.equal(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'mine');
    assert.ok(!existsSync(join(dir, 'package.json')));
  });

  test('in a terminal it asks: the folder (again while it is not empty), the template (again while unknown), install', async () => {
    const { ask } = await import(pathToFileURL(CLI).href);
    const input = new PassThrough();
    const output = new PassThrough();
    mkdirSync(join(work, 'occupied'));
    writeFileSync(join(work, 'occupied', 'notes.txt'), 'mine');
    const answers = [join(work, 'occupied'), join(work, 'asked'), '9', '2', 'n'];
    let shown = '';
    output.on('data', (d) => {
      shown += d;
      if (shown.endsWith(': ')) input.write(`${answers.shift()}\n`);
    });
    const opts = { install: true, pm: 'npm' };
    await ask(opts, input, output);
    assert.deepEqual(opts, { install: false, pm: 'npm', dir: join(work, 'asked'), template: 'realtime' });
    assert.deepEqual(answers, []);
    assert.match(shown, /occupied is not empty/);
    assert.equal(shown.match(/Which one \(1\): /g)?.length, 2, 'asked again after an unknown answer');
    assert.match(shown, /Install dependencies with npm\? \(Y\/n\): $/);
  });

  test('--help lists the templates', () => {
    const r = cli(['--help']);
    assert.equal(r.status, 0);
    assert.match(r.stdout, /--template api\|realtime\|sveltekit/);
    for (const t of ['api', 'realtime', 'sveltekit']) assert.match(r.stdout, new RegExp(`^  ${t} `, 'm'));
  });

  test('on Node < 22 it says so in one line', (t) => {
    const old = spawnSync('/usr/bin/node', ['--version'], { encoding: 'utf8' });
    if (old.status !== 0 || Number(old.stdout.slice(1).split('.')[0]) >= 22) return t.skip('no Node < 22 at /usr/bin/node');
    const r = spawnSync('/usr/bin/node', [CLI, 'app1', '--template', 'api'], { cwd: work, encoding: 'utf8', timeout: 20_000 });
    assert.equal(r.status, 1);
    assert.equal(r.stderr, `create-tachyon: Tachyon needs Node.js 22 or newer; this is ${old.stdout.trim()}\n`);
  });
});

describe('create-tachyon: every template, installed from the packed packages', { timeout: 900_000 }, () => {
  const tarballs = {};
  /** The CLI as npm delivers it: from create-tachyon's own tarball (its `files` list). */
  let packedCli = '';
  before(() => {
    for (const name of ['server', 'client', 'sveltekit', 'create-tachyon']) {
      const out = sh('npm', ['pack', '--json', '--pack-destination', work], join(ROOT, 'packages', name)).stdout;
      tarballs[name === 'create-tachyon' ? name : `@tachyon/${name}`] = join(work, JSON.parse(out)[0].filename);
    }
    const unpacked = join(work, 'create-tachyon-package');
    mkdirSync(unpacked);
    sh('tar', ['-xzf', tarballs['create-tachyon'], '-C', unpacked], work);
    packedCli = join(unpacked, 'package', 'bin', 'create-tachyon.js');
  });

  /** Scaffolds with the CLI, checks what it wrote, installs with the tarballs in place of the registry. */
  function create(template) {
    const dir = join(work, `my-${template}`);
    const r = spawnSync(node, [packedCli, `my-${template}`, '--template', template, '--no-install'], {
      cwd: work,
      encoding: 'utf8',
      timeout: 20_000,
      env,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`cd my-${template}\\n  npm install\\n  npm run dev`));
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    assert.equal(pkg.name, `my-${template}`);
    assert.equal(pkg.type, 'module');
    assert.match(pkg.engines.node, /^>=22/);
    assert.ok(pkg.devDependencies.typescript && pkg.devDependencies['@types/node'], 'typescript and @types/node are devDependencies');
    for (const s of ['dev', 'start', 'test', 'typecheck']) assert.ok(pkg.scripts[s], `script ${s}`);
    const tachyon = Object.entries({ ...pkg.dependencies, ...pkg.devDependencies }).filter(([n]) => n.startsWith('@tachyon/'));
    assert.ok(tachyon.length > 0);
    for (const [name, range] of tachyon) assert.equal(range, `^${VERSION}`, `${name}: the published name at the current version`);
    for (const f of ['README.md', 'Dockerfile', '.gitignore', '.dockerignore', 'tsconfig.json']) assert.ok(existsSync(join(dir, f)), f);
    const dockerfile = readFileSync(join(dir, 'Dockerfile'), 'utf8');
    assert.match(dockerfile, /^FROM node:\d+-\w+-slim$/m);
    assert.match(dockerfile, /^USER node$/m);
    assert.match(dockerfile, /^HEALTHCHECK [\s\S]*\/healthz/m);
    const needed = tachyon.map(([name]) => tarballs[name]);
    sh('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...needed], dir, 300_000);
    return dir;
  }

  /** The README's tsconfig block is the project's tsconfig.json. */
  function readmeTsconfig(dir) {
    const block = /```json\n([\s\S]*?)```/.exec(readFileSync(join(dir, 'README.md'), 'utf8'));
    assert.ok(block, 'README shows the tsconfig');
    assert.deepEqual(JSON.parse(block[1]), JSON.parse(readFileSync(join(dir, 'tsconfig.json'), 'utf8')));
  }

  test('api: typecheck, test, start; routes, validation, /healthz', async () => {
    const dir = create('api');
    readmeTsconfig(dir);
    sh('npm', ['run', 'typecheck'], dir);
    assert.match(sh('npm', ['test'], dir).stdout, /^(ℹ|#) fail 0$/m);
    const app = await start(dir);
    try {
      assert.equal((await fetch(`${app.base}/healthz`)).status, 200);
      const created = await fetch(`${app.base}/todos`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"title":"ship it"}',
      });
      assert.equal(created.status, 201);
      assert.deepEqual(await (await fetch(`${app.base}/todos`)).json(), [{ id: 1, title: 'ship it', done: false }]);
      assert.equal(
        (await fetch(`${app.base}/todos`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status,
        400,
      );
    } finally {
      await app.stop();
    }
  });

  test('realtime: typecheck, test, start; the page, the client, a message over /chat', async () => {
    const dir = create('realtime');
    readmeTsconfig(dir);
    sh('npm', ['run', 'typecheck'], dir);
    assert.match(sh('npm', ['test'], dir).stdout, /^(ℹ|#) fail 0$/m);
    const app = await start(dir);
    try {
      assert.match(await (await fetch(app.base)).text(), /import \{ connect \} from '\/tachyon\/client\.js'/);
      assert.equal((await fetch(`${app.base}/tachyon/client.js`)).status, 200);
      const bob = subscribe(`${app.base.replace('http', 'ws')}/chat`, 'room:lobby');
      await bob.opened;
      await waitFor(async () => (await (await fetch(`${app.base}/rooms/lobby`)).json()).online === 1, 'bob in the room');
      const ann = new WebSocket(`${app.base.replace('http', 'ws')}/chat`);
      await new Promise((resolve) => (ann.onopen = resolve));
      ann.send(JSON.stringify({ type: 'event', event: 'say', data: { room: 'lobby', name: 'ann', text: 'hi' } }));
      await waitFor(() => bob.events.some((e) => e.event === 'message'), 'the message');
      assert.deepEqual(
        bob.events.filter((e) => e.event === 'message').map((e) => [e.topic, e.data.name, e.data.text]),
        [['room:lobby', 'ann', 'hi']],
      );
      ann.close();
      bob.ws.close();
    } finally {
      await app.stop();
    }
  });

  test('sveltekit: typecheck, test (builds), production-only install, start; a page and /ws', async () => {
    const dir = create('sveltekit');
    readmeTsconfig(dir);
    sh('npm', ['run', 'typecheck'], dir);
    assert.match(sh('npm', ['test'], dir).stdout, /^(ℹ|#) fail 0$/m);
    assert.ok(existsSync(join(dir, 'build', 'index.js')), 'npm test built the app');
    // As the Dockerfile's runtime stage: production dependencies only.
    sh('npm', ['prune', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'], dir);
    assert.ok(!existsSync(join(dir, 'node_modules', 'svelte-check')), 'devDependencies pruned');
    const app = await start(dir);
    try {
      const page = await fetch(app.base);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<h1>Chat<\/h1>/);
      assert.equal((await fetch(`${app.base}/healthz`)).status, 200);
      const reader = subscribe(`${app.base.replace('http', 'ws')}/ws`, 'room:lobby');
      await reader.opened;
      await waitFor(async () => /1 other page/.test(await (await fetch(app.base)).text()), 'the subscription');
      const say = await fetch(`${app.base}/?/say`, {
        method: 'POST',
        headers: { origin: app.base, 'content-type': 'application/x-www-form-urlencoded', 'x-sveltekit-action': 'true' },
        body: 'name=ann&text=hi',
      });
      assert.equal(say.status, 200);
      await waitFor(() => reader.events.some((e) => e.event === 'message'), 'the message');
      reader.ws.close();
    } finally {
      await app.stop();
    }
  });
});
