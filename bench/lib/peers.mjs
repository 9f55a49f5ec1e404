// The peers: how to start each server, which packages it needs, and whether it can run here.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { BENCH_DIR, REPO_DIR } from './util.mjs';

/**
 * runtime: which binary runs the server script. packages: what it imports (for versions and
 * the install check). label: the name in tables.
 */
export const PEERS = {
  uws: {
    label: 'raw uWS',
    runtime: 'node',
    packages: ['uWebSockets.js'],
    about: 'raw uWebSockets.js: the same work written by hand (the ceiling)',
  },
  tachyon: { label: 'Tachyon', runtime: 'node', packages: ['@tachyon/server', 'zod'], about: 'the framework under test, public API only' },
  'tachyon-coalesced': {
    label: 'Tachyon (coalesced)',
    runtime: 'node',
    packages: ['@tachyon/server', 'zod'],
    about: 'Tachyon with coalescePublishes: true (one batch frame per topic per event-loop iteration)',
  },
  'tachyon-cors': {
    label: 'Tachyon + cors',
    runtime: 'node',
    packages: ['@tachyon/server', 'zod'],
    about: 'Tachyon with cors({ origin: [one origin], credentials: true }) app-wide',
  },
  'tachyon-secure-headers': {
    label: 'Tachyon + secureHeaders',
    runtime: 'node',
    packages: ['@tachyon/server', 'zod'],
    about: 'Tachyon with secureHeaders() defaults app-wide',
  },
  'tachyon-rate-limit': {
    label: 'Tachyon + rateLimit',
    runtime: 'node',
    packages: ['@tachyon/server', 'zod'],
    about: 'Tachyon with rateLimit() (memory store, a limit never reached) app-wide',
  },
  'tachyon-metrics': {
    label: 'Tachyon + metrics',
    runtime: 'node',
    packages: ['@tachyon/server', 'zod'],
    about: 'Tachyon with metrics() (prom-client, default process metrics) app-wide',
  },
  'tachyon-access-log': {
    label: 'Tachyon + access log',
    runtime: 'node',
    packages: ['@tachyon/server', 'zod', 'pino'],
    about: 'Tachyon with requestId and accessLog through pino (async, buffered, to /dev/null)',
  },
  'tachyon-hooks': {
    label: 'Tachyon + 3 hooks',
    runtime: 'node',
    packages: ['@tachyon/server', 'zod'],
    about: 'Tachyon with three no-op app hooks (onRequest, preHandler, onResponse): the cost of the hook machinery',
  },
  'tachyon-otel': {
    label: 'Tachyon + otel',
    runtime: 'node',
    packages: ['@tachyon/server', 'zod', '@tachyon/otel', '@opentelemetry/sdk-trace'],
    about: 'Tachyon with @tachyon/otel and the OpenTelemetry SDK: a sampled server span per request, batched, exporter dropping them',
  },
  'tachyon-otel-off': {
    label: 'Tachyon + otel (no SDK)',
    runtime: 'node',
    packages: ['@tachyon/server', 'zod', '@tachyon/otel'],
    about: 'Tachyon with @tachyon/otel registered and no tracer provider: should equal tachyon',
  },
  'tachyon-all': {
    label: 'Tachyon + all',
    runtime: 'node',
    packages: ['@tachyon/server', 'zod', 'pino'],
    about: 'Tachyon with metrics, cors, secureHeaders, rateLimit, request ids and the access log',
  },
  'tachyon-mount': {
    label: 'Tachyon mount()',
    runtime: 'node',
    packages: ['@tachyon/server', 'zod'],
    about: "Tachyon's web-standard bridge: one fetch handler (routing by hand) through app.mount('/')",
  },
  'tachyon-zod-runtime': {
    label: 'Tachyon, Zod uncompiled',
    runtime: 'node',
    packages: ['@tachyon/server', 'zod'],
    about:
      "Tachyon with compileSchemas: false: Zod's safeParse as written, what the raw uWS peer runs (the default compiles each schema, z.compile)",
  },
  'node-http': { label: 'node:http', runtime: 'node', packages: [], about: "Node's own HTTP server, routing by hand" },
  express: { label: 'Express', runtime: 'node', packages: ['express'], about: 'Express 5 (express.static on the static scenarios)' },
  fastify: {
    label: 'Fastify',
    runtime: 'node',
    packages: ['fastify', '@fastify/static'],
    about: 'Fastify 5 with its own JSON-schema validation (@fastify/static on the static scenarios)',
  },
  hono: {
    label: 'Hono',
    runtime: 'node',
    packages: ['hono', '@hono/node-server'],
    about: 'Hono on @hono/node-server, its validator middleware',
  },
  'hyper-express': {
    label: 'hyper-express',
    runtime: 'node',
    packages: ['hyper-express'],
    about: 'hyper-express 6.18 on the same uWS binary',
  },
  'ultimate-express': {
    label: 'ultimate-express',
    runtime: 'node',
    packages: ['ultimate-express'],
    about: 'ultimate-express 2.x on the same uWS binary',
  },
  sirv: { label: 'sirv', runtime: 'node', packages: ['sirv'], about: "sirv 3 on node:http (SvelteKit adapter-node's static server)" },
  ws: { label: 'ws', runtime: 'node', packages: ['ws'], about: 'ws 8 on node:http' },
  socketio: { label: 'Socket.IO', runtime: 'node', packages: ['socket.io'], about: 'Socket.IO 4.8 on its default ws engine' },
  'socketio-uws': {
    label: 'Socket.IO/uWS',
    runtime: 'node',
    packages: ['socket.io', 'uWebSockets.js'],
    about: 'Socket.IO 4.8 on uWebSockets.js (io.attachApp)',
  },
  bun: { label: 'Bun.serve', runtime: 'bun', packages: ['bun'], about: 'Bun.serve (routes, native WebSocket pub/sub), bun from npm' },
  elysia: { label: 'Elysia', runtime: 'bun', packages: ['bun', 'elysia'], about: 'Elysia on Bun, its own `t` validation' },
  deno: { label: 'Deno.serve', runtime: 'deno', packages: ['deno'], about: 'Deno.serve and Deno.upgradeWebSocket, deno from npm' },
};

/**
 * package.json of a dependency as bench/servers would resolve it, looking only as far up as
 * bench/: the repository root's node_modules holds the framework's own install (with
 * uWebSockets.js as shipped), not the benchmark's, so it must not count as installed.
 */
export function pkgJson(name) {
  for (let dir = path.join(BENCH_DIR, 'servers'); dir.startsWith(BENCH_DIR); dir = path.dirname(dir)) {
    const file = path.join(dir, 'node_modules', name, 'package.json');
    if (existsSync(file)) return { file, pkg: JSON.parse(readFileSync(file, 'utf8')) };
  }
  return undefined;
}

export function pkgVersion(name) {
  const found = pkgJson(name);
  if (!found) return undefined;
  const { pkg } = found;
  return pkg.name && pkg.name !== name ? `${pkg.version} (${pkg.name})` : pkg.version;
}

/** The first candidate binary that runs `--version`; else the reason none did. */
function probeBinary(what, candidates) {
  const errors = [];
  for (const bin of candidates) {
    if (!existsSync(bin)) continue;
    const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 20_000, env: { ...process.env, DENO_NO_UPDATE_CHECK: '1' } });
    if (r.status === 0)
      return {
        bin,
        version: r.stdout
          .trim()
          .split('\n')[0]
          .replace(new RegExp(`^${what}\\s+`, 'i'), ''),
      };
    errors.push(
      `${path.relative(REPO_DIR, bin)} --version failed: ${(r.error?.message ?? r.stderr ?? '').trim().split('\n')[0] || `exit ${r.status}`}`,
    );
  }
  if (errors.length) return { error: errors.join('; ') };
  return {
    error: `no ${what} binary in node_modules (looked for ${candidates.map((c) => path.relative(REPO_DIR, c)).join(', ')}); the npm package ships it in an optional dependency: run npm install in bench/`,
  };
}

/** Resolves the runtimes (bun, deno from npm) once: { node, bun, deno } with bin/version or error. */
export function probeRuntimes() {
  const nm = (...p) => path.join(BENCH_DIR, 'node_modules', ...p);
  return {
    node: { bin: process.execPath, version: process.version },
    bun: probeBinary('bun', [
      nm('bun', 'bin', 'bun.exe'),
      nm('@oven', 'bun-linux-x64', 'bin', 'bun'),
      nm('@oven', 'bun-linux-x64-baseline', 'bin', 'bun'),
    ]),
    deno: probeBinary('deno', [nm('deno', 'deno'), nm('@deno', 'linux-x64-glibc', 'deno')]),
  };
}

/** Why a peer cannot run here (undefined when it can). */
export function peerProblem(peer, runtimes) {
  const def = PEERS[peer];
  const missing = def.packages.filter((p) => !pkgJson(p));
  if (missing.length)
    return `package${missing.length > 1 ? 's' : ''} ${missing.join(', ')} not installed (bench/package.json; npm run bench installs them, or run npm install in bench/)`;
  const rt = runtimes[def.runtime];
  if (rt.error) return rt.error;
  return undefined;
}

/** argv to run a peer's server (before pinning). */
export function serverArgv(peer, runtimes, extraNodeArgs = []) {
  const script = path.join(BENCH_DIR, 'servers', `${peer}.mjs`);
  const def = PEERS[peer];
  if (def.runtime === 'bun') return [runtimes.bun.bin, script];
  if (def.runtime === 'deno') return [runtimes.deno.bin, 'run', '-A', '--no-lock', '--quiet', script];
  return [process.execPath, ...extraNodeArgs, script];
}
