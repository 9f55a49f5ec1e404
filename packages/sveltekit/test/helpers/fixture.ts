// Builds the fixture SvelteKit app (test/fixture/src) for one Kit version and starts it.
// SvelteKit, Vite and Svelte live in the fixture's own install (test/fixture/kit3,
// test/fixture/kit2: `npm ci` on first use), not in the repository's workspace, so the
// default install stays lean. A build is reused while its inputs (the app's source, the
// configs, the lockfile and this package's dist/) are unchanged.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
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

function run(cmd: string, args: string[], cwd: string, what: string): void {
  const r = spawnSync(cmd, args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    env: { ...process.env, NODE_ENV: 'production' },
  });
  if (r.status !== 0) throw new Error(`${what} failed in ${cwd} (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
}

/** Installs the fixture's SvelteKit, Vite and Svelte (once, and when its lockfile changed); returns its directory. */
export function installFixture(kit: KitVersion): string {
  const dir = join(FIXTURE, kit);
  const lock = join(dir, 'package-lock.json');
  const installed = join(dir, 'node_modules', '.package-lock.json');
  if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(lock).mtimeMs) {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    run(npm, ['ci', '--no-audit', '--no-fund', '--legacy-peer-deps'], dir, `npm ci (${kit} fixture)`);
  }
  return dir;
}

/** Installs (once) and builds (when inputs changed) the fixture for `kit`; returns its directory. */
export function buildFixture(kit: KitVersion): string {
  const dir = join(FIXTURE, kit);
  // The shared source, copied so both Kit versions build the very same app.
  rmSync(join(dir, 'src'), { recursive: true, force: true });
  cpSync(join(FIXTURE, 'src'), join(dir, 'src'), { recursive: true });
  cpSync(join(FIXTURE, 'static'), join(dir, 'static'), { recursive: true });

  installFixture(kit);

  const hash = createHash('sha256');
  for (const f of ['package-lock.json', 'vite.config.js', 'svelte.config.js'])
    if (existsSync(join(dir, f))) hash.update(f).update(readFileSync(join(dir, f)));
  hashTree(hash, join(dir, 'src'), dir);
  hashTree(hash, join(dir, 'static'), dir);
  hashTree(hash, join(PACKAGE, 'dist'), PACKAGE);
  const key = hash.digest('hex');
  const stamp = join(dir, '.build-stamp');
  if (!(existsSync(stamp) && readFileSync(stamp, 'utf8') === key && existsSync(join(dir, 'build', 'index.js')))) {
    rmSync(stamp, { force: true });
    run(process.execPath, [join(dir, 'node_modules', 'vite', 'bin', 'vite.js'), 'build'], dir, `vite build (${kit} fixture)`);
    writeFileSync(stamp, key);
  }
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
