#!/usr/bin/env node
// Installs what the tests need from the system when it is missing: redis-server (and
// redis-cli) and nats-server, which the bus tests start on free ports (test/buses/), and
// nginx, which the fallback transport tests put in front of the server (test/realtime/fallback/). Debian
// and Ubuntu: apt-get (as root, `apt-get update` first). Run by `npm test`; run it by hand
// with `node scripts/ensure-system-deps.mjs`.
import { spawnSync } from 'node:child_process';

const NEEDED = [
  { bin: 'redis-server', pkg: 'redis-server' },
  { bin: 'redis-cli', pkg: 'redis-tools' },
  { bin: 'nats-server', pkg: 'nats-server' },
  { bin: 'nginx', pkg: 'nginx-light' },
];

// /usr/sbin: where Debian puts nginx, not always on a non-root PATH.
const has = (bin) => spawnSync('sh', ['-c', `PATH="$PATH:/usr/sbin" command -v ${bin}`], { stdio: 'ignore' }).status === 0;

export function ensureSystemDeps() {
  const missing = NEEDED.filter((n) => !has(n.bin));
  if (missing.length === 0) return;
  const pkgs = [...new Set(missing.map((m) => m.pkg))];
  console.log(`Installing ${pkgs.join(', ')} (needed by the bus and proxy tests) with apt-get…`);
  if (!has('apt-get'))
    throw new Error(`missing ${missing.map((m) => m.bin).join(', ')} and no apt-get: install ${pkgs.join(' ')} yourself`);
  const sudo = process.getuid?.() === 0 ? [] : ['sudo', '-n'];
  const run = (args) => {
    const [cmd, ...rest] = [...sudo, ...args];
    const r = spawnSync(cmd, rest, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (r.status !== 0) throw new Error(`${args.join(' ')} failed (status ${r.status})`);
  };
  run(['apt-get', 'update']);
  run(['apt-get', 'install', '-y', '--no-install-recommends', ...pkgs]);
  const still = NEEDED.filter((n) => !has(n.bin));
  if (still.length > 0) throw new Error(`still missing after apt-get: ${still.map((m) => m.bin).join(', ')}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    ensureSystemDeps();
  } catch (err) {
    console.error(String(err.message ?? err));
    process.exit(1);
  }
}
