// The machine and the tools: wrk (installed from Debian when missing), bench/loadgen (built
// with cargo when missing or stale), versions of everything, and the open-file limit.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PEERS, pkgVersion } from './peers.mjs';
import { BENCH_DIR, REPO_DIR, fail, sh, which } from './util.mjs';

export const SERVER_CPU = 0;
export const LOAD_CPU = 1;
export const LOADGEN_DIR = path.join(BENCH_DIR, 'loadgen');
export const LOADGEN_BIN = path.join(LOADGEN_DIR, 'target', 'release', 'loadgen');

export function ensureWrk(log) {
  return ensureDebianTool('wrk', 'wrk', log);
}

/** A command from a Debian package, installed with apt-get when missing. */
export function ensureDebianTool(command, pkg, log) {
  if (which(command)) return 'present';
  log(`bench: ${command} not found; installing it from Debian with \`apt-get install -y ${pkg}\``);
  if (!which('apt-get')) fail(`${command} is not installed and apt-get is not available: install ${pkg} and retry`);
  const sudo = process.getuid?.() !== 0 && which('sudo') ? ['sudo'] : [];
  const apt = (...args) =>
    spawnSync(sudo[0] ?? 'apt-get', [...(sudo.length ? ['apt-get'] : []), ...args], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    }).status === 0;
  if (!apt('install', '-y', pkg)) {
    log('bench: apt-get install failed; running `apt-get update` and retrying');
    if (!apt('update') || !apt('install', '-y', pkg)) fail(`could not install ${pkg} with apt-get`);
  }
  if (!which(command)) fail(`${command} still not found after apt-get install ${pkg}`);
  log(`bench: ${pkg} installed`);
  return 'installed';
}

/** Newest modification time under the loadgen's sources. */
function newestSource() {
  let newest = 0;
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  walk(path.join(LOADGEN_DIR, 'src'));
  for (const f of ['Cargo.toml', 'Cargo.lock']) newest = Math.max(newest, statSync(path.join(LOADGEN_DIR, f)).mtimeMs);
  return newest;
}

/**
 * Builds bench/loadgen (release) when the binary is missing or older than its sources.
 * Returns { bin, built } or { error } (then the WebSocket scenarios are unavailable).
 */
export function ensureLoadgen(log) {
  const fresh = existsSync(LOADGEN_BIN) && statSync(LOADGEN_BIN).mtimeMs >= newestSource();
  if (fresh) return { bin: LOADGEN_BIN, built: false };
  const cargo = which('cargo')
    ? 'cargo'
    : existsSync(path.join(os.homedir(), '.cargo', 'bin', 'cargo'))
      ? path.join(os.homedir(), '.cargo', 'bin', 'cargo')
      : undefined;
  if (!cargo) return { error: 'cargo not found: install Rust (https://rustup.rs) so the suite can build bench/loadgen' };
  log(
    `bench: building the WebSocket load generator: cargo build --release --manifest-path bench/loadgen/Cargo.toml (crates from crates.io; about 20 s from clean)`,
  );
  const t0 = Date.now();
  const r = spawnSync(cargo, ['build', '--release', '--manifest-path', path.join(LOADGEN_DIR, 'Cargo.toml')], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (r.status !== 0 || !existsSync(LOADGEN_BIN))
    return { error: `cargo build of bench/loadgen failed (${r.error?.message ?? `exit ${r.status}`})` };
  log(`bench: loadgen built in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return { bin: LOADGEN_BIN, built: true };
}

/** Current RLIMIT_NOFILE of this process, and whether a child can be given `want`. */
export function nofileStatus(want) {
  const soft = Number(sh('sh', ['-c', 'ulimit -Sn'])) || undefined;
  const hard = Number(sh('sh', ['-c', 'ulimit -Hn'])) || undefined;
  if (!which('prlimit')) return { soft, hard, ok: hard !== undefined && want <= hard, reason: 'prlimit (util-linux) not found' };
  const r = spawnSync('prlimit', [`--nofile=${want}:${want}`, 'true'], { encoding: 'utf8' });
  if (r.status === 0) return { soft, hard, ok: true };
  const why = (r.stderr || '').trim().split('\n')[0] || `exit ${r.status}`;
  return {
    soft,
    hard,
    ok: false,
    reason: `the hard open-file limit is ${hard} and cannot be raised to ${want} here (\`prlimit --nofile=${want}:${want}\` as ${process.getuid?.() === 0 ? 'root' : 'this user'}: "${why}"; raising a hard limit needs CAP_SYS_RESOURCE, which this container does not grant)`,
  };
}

function cargoVersion(file) {
  const m = /^version\s*=\s*"([^"]+)"/m.exec(readFileSync(file, 'utf8'));
  return m?.[1];
}

export function environment(runtimes) {
  const cpuinfo = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';
  const clkTck = Number(sh('getconf', ['CLK_TCK'])) || 100;
  const cpus = os.availableParallelism?.() ?? os.cpus().length;
  const pin = which('taskset');
  const commit = sh('git', ['-C', REPO_DIR, 'rev-parse', 'HEAD']);
  const dirty = commit ? Boolean(sh('git', ['-C', REPO_DIR, 'status', '--porcelain', '--', 'packages'])) : undefined;
  const packages = {};
  for (const name of new Set(['uWebSockets.js', '@tachyon/server', 'zod', ...Object.values(PEERS).flatMap((p) => p.packages)]))
    packages[name] = pkgVersion(name) ?? null;
  return {
    node: process.version,
    bun: runtimes.bun.version ?? null,
    deno: runtimes.deno.version ?? null,
    packages,
    wrk: sh('sh', ['-c', 'wrk -v 2>&1 | head -1'])?.replace(/\s*Copyright.*$/, ''),
    loadgen: `${cargoVersion(path.join(LOADGEN_DIR, 'Cargo.toml'))} (bench/loadgen, release build)`,
    rustc: sh('sh', ['-c', `rustc --version 2>/dev/null || ${path.join(os.homedir(), '.cargo', 'bin', 'rustc')} --version`]),
    kernel: sh('uname', ['-r']),
    os: sh('sh', ['-c', '. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"']),
    cpuModel: /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? os.cpus()[0]?.model,
    cpus,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    clkTck,
    pin,
    prlimit: which('prlimit'),
    serverCpu: SERVER_CPU,
    loadCpu: pin && cpus >= 2 ? LOAD_CPU : SERVER_CPU,
    git: commit ? { commit, packagesDirty: dirty } : undefined,
  };
}
