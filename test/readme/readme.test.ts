// README.md's "Use it in your app", "By hand", run as written so that it cannot drift: every
// shell line in order, in a temporary folder outside the repository (`cd` followed), and every
// file block written under the name its paragraph gives (`server.ts`, `tsconfig.json`). The
// only changes: @tachyon/* install from the packed tarballs (npm pack, as test/consumer does)
// instead of the registry, installs prefer npm's cache, and a `node <file>.ts` line (a server
// that runs until stopped) is started, requested over HTTP and a WebSocket, and stopped.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const work = mkdtempSync(join(tmpdir(), 'tachyon-readme-'));
const env = {
  ...process.env,
  PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
};
after(() => rmSync(work, { recursive: true, force: true }));

interface Block {
  lang: string;
  code: string;
  /** The last `name.ext` in backticks in the paragraph before the block. */
  file?: string;
}

/** The fenced blocks of the README section `## title` (up to the next `## `), in order. */
function section(title: string): { text: string; blocks: Block[] } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n## ${title}\n`);
  assert.ok(start >= 0, `README has "## ${title}"`);
  const end = readme.indexOf('\n## ', start + 4);
  const text = readme.slice(start, end < 0 ? undefined : end);
  const blocks: Block[] = [];
  const fence = /```(\w+)\n([\s\S]*?)```/g;
  let last = 0;
  for (let m = fence.exec(text); m; m = fence.exec(text)) {
    const before = text.slice(last, m.index).trim().split('\n\n').at(-1) ?? '';
    const names = [...before.matchAll(/`([\w.-]+\.(?:ts|json))`/g)].map((n) => n[1]!);
    blocks.push({ lang: m[1]!, code: m[2]!, file: names.at(-1) });
    last = m.index + m[0].length;
  }
  return { text, blocks };
}

function pack(pkg: string): string {
  const r = spawnSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: join(ROOT, 'packages', pkg), encoding: 'utf8', env });
  assert.equal(r.status, 0, r.stderr);
  return join(work, JSON.parse(r.stdout)[0].filename);
}

/** A README command as this test runs it: the tarballs for @tachyon/*, cache first. */
function adapt(command: string, tarballs: Record<string, string>): string {
  if (!/^npm install\b/.test(command)) return command;
  const words = command.split(/\s+/).map((w) => tarballs[w] ?? w);
  return [...words, '--prefer-offline', '--no-audit', '--no-fund'].join(' ');
}

async function serve(file: string, cwd: string): Promise<void> {
  const proc = spawn(process.execPath, [file], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const exited = new Promise((r) => proc.once('exit', r));
  try {
    const port = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`node ${file}: no "Listening on" line in 20 s:\n${out}`)), 20_000);
      proc.stdout.on('data', () => {
        const m = /Listening on http:\/\/localhost:(\d+)/.exec(out);
        if (m) resolve(m[1]!), clearTimeout(timer);
      });
      void exited.then(() => reject(new Error(`node ${file} exited:\n${out}`)));
    });
    assert.deepEqual(await (await fetch(`http://127.0.0.1:${port}/hello/ada`)).json(), { hello: 'ada' });
    // The README's WebSocket route: the ping event's reply.
    const ws = new WebSocket(`ws://127.0.0.1:${port}/live`);
    const reply = await new Promise<unknown>((resolve, reject) => {
      ws.onopen = () => ws.send(JSON.stringify({ type: 'event', event: 'ping', ref: 1 }));
      ws.onmessage = (m) => resolve(JSON.parse(String(m.data)));
      ws.onerror = () => reject(new Error('WebSocket failed'));
    });
    assert.deepEqual(reply, { type: 'reply', ref: 1, data: 'pong' });
    ws.close();
  } finally {
    proc.kill('SIGTERM');
    await exited;
  }
}

test('README "Use it in your app": the manual steps, run as written, give an app that type-checks and serves', {
  timeout: 300_000,
}, async () => {
  const { text, blocks } = section('Use it in your app');
  assert.match(text, /^npm create tachyon@latest my-app$/m, 'npm create comes first');
  const byHand = blocks.slice(blocks.findIndex((b) => b.lang === 'sh' && b.code.startsWith('mkdir')));
  assert.ok(byHand.length >= 4, 'the manual steps: shell, tsconfig.json, server.ts, shell');
  const tarballs = { '@tachyon/server': pack('server'), '@tachyon/client': pack('client') };

  // The README's tsconfig is the one create-tachyon writes (minus its include list).
  const tsconfig = byHand.find((b) => b.file === 'tsconfig.json');
  const template = JSON.parse(readFileSync(join(ROOT, 'packages/create-tachyon/templates/_shared/tsconfig.json'), 'utf8'));
  assert.deepEqual(
    JSON.parse(tsconfig!.code).compilerOptions,
    template.compilerOptions,
    'README and the api/realtime templates share one tsconfig',
  );

  let cwd = work;
  let served = false;
  for (const block of byHand) {
    if (block.lang === 'json' || block.lang === 'ts') {
      assert.ok(block.file, `a ${block.lang} block without a file name before it:\n${block.code}`);
      writeFileSync(join(cwd, block.file), block.code);
      continue;
    }
    assert.equal(block.lang, 'sh');
    for (const line of block.code.split('\n')) {
      const command = line.replace(/\s+#.*$/, '').trim();
      if (!command) continue;
      for (const step of command.split(/\s*&&\s*/)) {
        const cd = /^cd (\S+)$/.exec(step);
        if (cd) {
          cwd = resolve(cwd, cd[1]!);
          continue;
        }
        const run = /^node (\S+\.ts)$/.exec(step);
        if (run) {
          await serve(run[1]!, cwd);
          served = true;
          continue;
        }
        const t0 = Date.now();
        const r = spawnSync('bash', ['-c', adapt(step, tarballs)], { cwd, encoding: 'utf8', env, timeout: 240_000 });
        assert.equal(r.status, 0, `README: ${step} (in ${cwd}) failed:\n${r.stdout}\n${r.stderr}`);
        console.log(`# ${step}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      }
    }
  }
  assert.ok(served, 'the README starts the server');
  const pkg = JSON.parse(readFileSync(join(cwd, 'package.json'), 'utf8'));
  assert.equal(pkg.type, 'module');
  assert.ok(pkg.devDependencies.typescript && pkg.devDependencies['@types/node']);
});
