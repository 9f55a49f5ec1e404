// Child processes (servers and load generators): spawning pinned, tracking, and killing them
// on every way out; CPU counters from /proc.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { BENCH_DIR } from './util.mjs';

const READY_TIMEOUT_MS = 20_000;

/** Every process we started and have not yet seen exit: killed on any way out. */
const live = new Set();

export function killGroup(child, signal) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    // Children are spawned detached, so each leads its own process group (prlimit and
    // taskset exec into their command, so the pid is the server's / the shell's).
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      /* already gone */
    }
  }
}

export function track(child) {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

export function killAll() {
  for (const child of live) killGroup(child, 'SIGKILL');
  live.clear();
}

let interrupted = false;
export const wasInterrupted = () => interrupted;

export function installSignalHandlers() {
  process.on('exit', killAll);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => {
      if (interrupted) return;
      interrupted = true;
      console.error(`\nbench: ${sig}, stopping servers and load generators`);
      killAll();
      process.exit(sig === 'SIGINT' ? 130 : 143);
    });
  }
}

export function waitExit(child, ms) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** The argv prefix that pins a command to `cpu` (nothing when pinning is off). */
export function pinned(env, cpu, argv) {
  return env.pin ? ['taskset', '-c', String(cpu), ...argv] : argv;
}

/**
 * Starts a fresh server process pinned to the server CPU; resolves once it printed
 * READY <port>. `nofile`: the RLIMIT_NOFILE (soft = hard) to give it, through prlimit.
 */
export function startServer(peer, argv, env, { nofile } = {}) {
  let full = pinned(env, env.serverCpu, argv);
  if (nofile && env.prlimit) full = ['prlimit', `--nofile=${nofile}:${nofile}`, ...full];
  const child = track(
    spawn(full[0], full.slice(1), {
      cwd: BENCH_DIR,
      env: {
        ...process.env,
        PORT: '0',
        BENCH_HARNESS: '1',
        NODE_ENV: 'production',
        STATIC_DIR: env.staticDir,
        DENO_NO_UPDATE_CHECK: '1',
        DENO_NO_PROMPT: '1',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    }),
  );
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => {
    if (stderr.length < 20_000) stderr += d;
  });
  child.stdin.on('error', () => {});
  let settled = false;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      killGroup(child, 'SIGKILL');
      reject(new Error(`${peer} server printed no READY line within ${READY_TIMEOUT_MS / 1000} s.\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, READY_TIMEOUT_MS);
    const onExit = (code, signal) => {
      clearTimeout(timer);
      reject(
        new Error(
          `${peer} server exited (${signal ?? `code ${code}`}) before it was ready.\nstdout: ${stdout.trim()}\nstderr: ${stderr.trim()}`,
        ),
      );
    };
    child.once('exit', onExit);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`could not start ${peer} server (${full[0]}): ${err.message}`));
    });
    child.stdout.setEncoding('utf8').on('data', (d) => {
      if (stdout.length < 20_000) stdout += d;
      const m = /^READY (\d+)\s*$/m.exec(stdout);
      if (m && !settled) {
        settled = true;
        clearTimeout(timer);
        child.off('exit', onExit);
        const server = { peer, child, pid: child.pid, port: Number(m[1]), stderr: () => stderr };
        child.once('exit', (code, signal) => {
          if (!server.stopping) server.died = `${signal ?? `code ${code}`}`;
        });
        resolve(server);
      }
    });
  });
}

export async function stopServer(server) {
  server.stopping = true;
  killGroup(server.child, 'SIGTERM');
  if (!(await waitExit(server.child, 2000))) {
    killGroup(server.child, 'SIGKILL');
    await waitExit(server.child, 2000);
  }
}

/**
 * Runs a load generator pinned to the load CPU under a bash wrapper whose `times` builtin
 * then reports the generator's own user+system CPU (the shell's children, once reaped).
 * `stopAfterS`: send SIGINT after that many seconds (wrk stops cleanly on it).
 */
export function runLoad(argv, env, { stopAfterS, allowFail = false } = {}) {
  const script = '"$@"; rc=$?; echo "__LOAD_TIMES__"; times; exit $rc';
  const full = pinned(env, env.loadCpu, ['bash', '-c', script, 'load', ...argv]);
  const child = track(spawn(full[0], full.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], detached: true }));
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d) => {
    if (err.length < 50_000) err += d;
  });
  const timer = stopAfterS !== undefined ? setTimeout(() => killGroup(child, 'SIGINT'), stopAfterS * 1000) : undefined;
  return new Promise((resolve, reject) => {
    child.once('error', (e) => reject(new Error(`could not run ${argv[0]}: ${e.message}`)));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const [text, timesOut = ''] = out.split('__LOAD_TIMES__');
      const lines = timesOut.trim().split('\n');
      // Second `times` line: CPU of the shell's children. Format: 0m1.234s 0m0.567s
      const m = /(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/.exec(lines[lines.length - 1] ?? '');
      const cpuS = m ? Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4]) : undefined;
      const stoppedOnPurpose = signal === 'SIGINT' || (stopAfterS !== undefined && code === 130);
      if (code !== 0 && !stoppedOnPurpose && !allowFail) {
        reject(new Error(`${argv[0]} failed (${signal ?? `exit ${code}`}): ${err.trim().slice(-2000) || text.trim().slice(-2000)}`));
        return;
      }
      resolve({ text, stderr: err, cpuS, code });
    });
  });
}

/** utime + stime of a whole process (all threads), in clock ticks. */
export function cpuTicks(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields[0] is field 3 (state)
  return Number(fields[14 - 3]) + Number(fields[15 - 3]);
}

/** VmRSS in kB. */
export function rssKb(pid) {
  try {
    const m = /^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** One CPU's counters from /proc/stat, in clock ticks: tasks (user+nice+system), irq (irq+softirq), steal, all. */
export function cpuStat(cpu) {
  const line = readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`cpu${cpu} `));
  if (!line) return undefined;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return {
    tasks: user + nice + system,
    irq: irq + softirq,
    steal: steal ?? 0,
    all: user + nice + system + idle + iowait + irq + softirq + (steal ?? 0),
  };
}

export function cpuDelta(a, b) {
  if (!a || !b) return undefined;
  return { tasks: b.tasks - a.tasks, irq: b.irq - a.irq, steal: b.steal - a.steal, all: b.all - a.all };
}

/**
 * One HTTP request on its own connection (so no idle keep-alive socket lingers during the
 * measurement). `body`: a string sent as application/json unless headers say otherwise.
 */
export function request(port, urlPath, { method = 'GET', body, headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const h = { ...headers };
    if (body !== undefined) {
      h['content-type'] ??= 'application/json';
      h['content-length'] = Buffer.byteLength(body);
    }
    const req = http.request({ host: '127.0.0.1', port, path: urlPath, method, headers: h, agent: false, timeout: 5000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        resolve({ status: res.statusCode, headers: res.headers, raw, body: raw.toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timed out after 5 s')));
    req.on('error', reject);
    req.end(body);
  });
}
