// Builds the fixture SvelteKit app (test/fixture/src) for one Kit version and starts it.
// SvelteKit, Vite and Svelte live in the fixture's own install (test/fixture/kit3,
// test/fixture/kit2: `npm ci` on first use), not in the repository's workspace, so the
// default install stays lean. A build is reused while its inputs (the app's source, the
// configs, the lockfile and this package's dist/) are unchanged.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export type KitVersion = 'kit3' | 'kit2';

const FIXTURE = fileURLToPath(new URL('../fixture/', import.meta.url));
const PACKAGE = fileURLToPath(new URL('../../', import.meta.url));

function hashTree(hash: ReturnType<typeof createHash>, dir: string, root: string): void {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const abs = join(dir, entry.name);
    if (entry.isDirectory()) hashTree(hash, abs, root);
    else if (entry.isFile()) hash.update(relative(root, abs)).update('\0').update(readFileSync(abs)).update('\0');
  }
}

function run(cmd: string, args: string[], cwd: string, what: string, env: Record<string, string> = {}): void {
  const r = spawnSync(cmd, args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    // npm runs under this Node (engine-strict apps refuse an older system node).
    env: { ...process.env, NODE_ENV: 'production', PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`, ...env },
  });
  if (r.status !== 0) throw new Error(`${what} failed in ${cwd} (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
}

/** Installs an app's own dependencies (once, and when its lockfile changed). */
function install(dir: string, what: string): void {
  const lock = join(dir, 'package-lock.json');
  const installed = join(dir, 'node_modules', '.package-lock.json');
  if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(lock).mtimeMs) {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    // --include=dev: run() sets NODE_ENV=production (for the builds), which would make npm leave out
    // devDependencies, where a scaffolded app (the sverdle demo) lists everything.
    run(npm, ['ci', '--no-audit', '--no-fund', '--legacy-peer-deps', '--include=dev'], dir, `npm ci (${what})`);
  }
}

/** Installs the fixture's SvelteKit, Vite and Svelte (once, and when its lockfile changed); returns its directory. */
export function installFixture(kit: KitVersion): string {
  const dir = join(FIXTURE, kit);
  install(dir, `${kit} fixture`);
  return dir;
}

/** Runs `vite build` in `dir` unless the app's inputs and this package's dist/ are unchanged since `stamp` was written. */
function buildIfChanged(dir: string, out: string, stamp: string, what: string, env: Record<string, string> = {}): void {
  const hash = createHash('sha256');
  for (const f of ['package-lock.json', 'vite.config.js', 'vite.config.ts', 'svelte.config.js'])
    if (existsSync(join(dir, f))) hash.update(f).update(readFileSync(join(dir, f)));
  hashTree(hash, join(dir, 'src'), dir);
  hashTree(hash, join(dir, 'static'), dir);
  hashTree(hash, join(PACKAGE, 'dist'), PACKAGE);
  hash.update(JSON.stringify(env));
  const key = hash.digest('hex');
  const stampFile = join(dir, stamp);
  if (!(existsSync(stampFile) && readFileSync(stampFile, 'utf8') === key && existsSync(join(dir, out, 'index.js')))) {
    rmSync(stampFile, { force: true });
    run(process.execPath, [join(dir, 'node_modules', 'vite', 'bin', 'vite.js'), 'build'], dir, `vite build (${what})`, env);
    writeFileSync(stampFile, key);
  }
}

/** Installs (once) and builds (when inputs changed) the fixture for `kit`; returns its directory. */
export function buildFixture(kit: KitVersion): string {
  const dir = join(FIXTURE, kit);
  // The shared source, copied so both Kit versions build the very same app.
  rmSync(join(dir, 'src'), { recursive: true, force: true });
  cpSync(join(FIXTURE, 'src'), join(dir, 'src'), { recursive: true });
  cpSync(join(FIXTURE, 'static'), join(dir, 'static'), { recursive: true });
  installFixture(kit);
  buildIfChanged(dir, 'build', '.build-stamp', `${kit} fixture`);
  return dir;
}

/**
 * The SvelteKit demo app (test/fixture/sverdle, from `sv create --template demo`), installed
 * and built with @tachyon/sveltekit (build/) and with adapter-node (build-node/); returns its directory.
 */
export function buildSverdle(): string {
  const dir = join(FIXTURE, 'sverdle');
  install(dir, 'sverdle app');
  buildIfChanged(dir, 'build', '.build-stamp', 'sverdle, @tachyon/sveltekit');
  buildIfChanged(dir, 'build-node', '.build-stamp-node', 'sverdle, adapter-node', { ADAPTER: 'node' });
  return dir;
}

export interface Running {
  url: string;
  port: number;
  child: ChildProcess;
  /** Everything the server printed so far. */
  output(): string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** Starts `node build` (or another entry) with `env` on a free port; resolves once it listens. */
export async function startServer(dir: string, env: Record<string, string> = {}, entry = 'build/index.js'): Promise<Running> {
  const child = spawn(process.execPath, [entry], {
    cwd: dir,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 15 s:\n${out}`)), 15_000);
    const check = () => {
      const m = /Listening on https?:\/\/[^\s]+:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before listening:\n${out}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    child,
    output: () => out,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
