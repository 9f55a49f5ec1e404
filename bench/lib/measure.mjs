// One measured run: a fresh server, a warm-up that is not counted, then the measurement with
// the server's CPU time and the load generator's own CPU.
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { postBody } from '../servers/shared.mjs';
import { cpuDelta, cpuStat, cpuTicks, rssKb, runLoad } from './procs.mjs';
import { HTTP_LOAD, ECHO_LOAD, FANOUT_LOAD, SCENARIOS, wsTarget } from './scenarios.mjs';

export const GENERATOR_BOUND = 0.95; // generator CPU / wall at or above this: the generator, not the server, is the limit
export const CONTENDED = 0.05; // other processes + steal on either pinned core at or above this: a noisy run

// ------------------------------------------------------------------ wrk scripts

let scriptsDir;
/** Lua scripts for wrk, written once per invocation into a temp dir. */
export function wrkScripts() {
  if (scriptsDir) return scriptsDir;
  scriptsDir = mkdtempSync(path.join(os.tmpdir(), 'tachyon-bench-wrk-'));
  // POST /users with the 1 KB JSON body (a Lua long string: no escaping needed).
  writeFileSync(
    path.join(scriptsDir, 'post.lua'),
    `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = [==[${postBody()}]==]\n`,
  );
  // HTTP/1.1 pipelining: each write carries DEPTH requests; wrk counts every answer.
  writeFileSync(
    path.join(scriptsDir, 'pipeline.lua'),
    `local depth = ${HTTP_LOAD.pipeline}\ninit = function(args)\n  local r = {}\n  for i = 1, depth do r[i] = wrk.format() end\n  req = table.concat(r)\nend\nrequest = function()\n  return req\nend\n`,
  );
  return scriptsDir;
}

export function wrkArgs(scenario, url, seconds, latency) {
  const sc = SCENARIOS[scenario];
  const dir = wrkScripts();
  const script = sc.method === 'POST' ? ['-s', path.join(dir, 'post.lua')] : sc.pipeline ? ['-s', path.join(dir, 'pipeline.lua')] : [];
  return [
    'wrk',
    `-t${HTTP_LOAD.threads}`,
    `-c${HTTP_LOAD.connections}`,
    `-d${seconds}s`,
    ...(latency ? ['--latency'] : []),
    ...script,
    url,
  ];
}

function toMs(value, unit) {
  const n = Number(value);
  return { us: n / 1000, ms: n, s: n * 1000, m: n * 60_000, h: n * 3_600_000 }[unit] ?? NaN;
}

export function parseWrk(text) {
  const num = (re) => {
    const m = re.exec(text);
    return m ? Number(m[1]) : undefined;
  };
  const latency = {};
  for (const m of text.matchAll(/^\s*(50|75|90|99)%\s+([\d.]+)(us|ms|s|m|h)\s*$/gm)) latency[`p${m[1]}`] = toMs(m[2], m[3]);
  // wrk sometimes prints 0.00us for the 99th percentile with pipelining (its histogram
  // overflows): unknown, not zero.
  if (latency.p99 === 0 && latency.p90 > 0) delete latency.p99;
  const avg = /^\s*Latency\s+([\d.]+)(us|ms|s|m|h)/m.exec(text);
  if (avg) latency.avg = toMs(avg[1], avg[2]);
  const done = /^\s*(\d+) requests in ([\d.]+)(us|ms|s|m|h)/m.exec(text);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  return {
    perSec: num(/^Requests\/sec:\s+([\d.]+)/m),
    count: done ? Number(done[1]) : undefined,
    durationS: done ? toMs(done[2], done[3]) / 1000 : undefined,
    latencyMs: latency,
    non2xx: num(/Non-2xx or 3xx responses:\s+(\d+)/) ?? 0,
    socketErrors: sock
      ? { connect: +sock[1], read: +sock[2], write: +sock[3], timeout: +sock[4] }
      : { connect: 0, read: 0, write: 0, timeout: 0 },
  };
}

// ------------------------------------------------------------------ interference

export function interference(env, sys0, sys1, serverTicks, genCpuS) {
  if (!env.pin || env.cpus < 2) return { contended: false };
  const [d0, d1] = [cpuDelta(sys0[0], sys1[0]), cpuDelta(sys0[1], sys1[1])];
  const frac = (ticks, d) => (d && d.all > 0 && Number.isFinite(ticks) ? Math.max(0, ticks) / d.all : undefined);
  const i = {
    serverCpuOthers: frac(d0?.tasks - serverTicks, d0),
    serverCpuSteal: frac(d0?.steal, d0),
    serverCpuIrq: frac(d0?.irq, d0),
    loadCpuOthers: genCpuS !== undefined ? frac(d1?.tasks - genCpuS * env.clkTck, d1) : undefined,
    loadCpuSteal: frac(d1?.steal, d1),
  };
  const serverCoreLost = (i.serverCpuOthers ?? 0) + (i.serverCpuSteal ?? 0);
  const loadCoreLost = (i.loadCpuOthers ?? 0) + (i.loadCpuSteal ?? 0);
  return { interference: i, serverCoreLost, loadCoreLost, contended: serverCoreLost >= CONTENDED || loadCoreLost >= CONTENDED };
}

const sysNow = (env) => [cpuStat(env.serverCpu), cpuStat(env.loadCpu)];

// ------------------------------------------------------------------ HTTP (wrk)

export async function measureHttp(server, scenario, opts, env) {
  const url = `http://127.0.0.1:${server.port}${SCENARIOS[scenario].path}`;
  if (opts.warmup > 0) await runLoad(wrkArgs(scenario, url, Math.max(1, Math.ceil(opts.warmup)), false), env, { stopAfterS: opts.warmup });
  if (server.died) throw new Error(`${server.peer} server died during warm-up (${server.died}): ${server.stderr()}`);

  const sys0 = sysNow(env);
  const cpu0 = cpuTicks(server.pid);
  const t0 = performance.now();
  const { text, cpuS } = await runLoad(wrkArgs(scenario, url, opts.duration, true), env);
  const wallS = (performance.now() - t0) / 1000;
  if (server.died) throw new Error(`${server.peer} server died during the measurement (${server.died}): ${server.stderr()}`);
  const cpu1 = cpuTicks(server.pid);
  const sys1 = sysNow(env);

  const wrk = parseWrk(text);
  if (!wrk.perSec || !wrk.count) throw new Error(`could not parse wrk's output:\n${text}`);
  const serverCpuS = (cpu1 - cpu0) / env.clkTck;
  const windowS = wrk.durationS ?? wallS;
  const genBusy = cpuS !== undefined ? cpuS / windowS : undefined;
  const errors = wrk.non2xx + Object.values(wrk.socketErrors).reduce((a, b) => a + b, 0);
  return {
    generator: 'wrk',
    perSec: wrk.perSec,
    count: wrk.count,
    windowS,
    wallS,
    latencyMs: wrk.latencyMs,
    serverCpuS,
    serverBusy: serverCpuS / windowS,
    cpuUsPer: (serverCpuS * 1e6) / wrk.count,
    genCpuS: cpuS,
    genBusy,
    generatorBound: genBusy !== undefined && genBusy >= GENERATOR_BOUND,
    errors,
    errorDetail: errors ? { non2xx: wrk.non2xx, socketErrors: wrk.socketErrors } : undefined,
    ...interference(env, sys0, sys1, cpu1 - cpu0, cpuS),
    raw: text,
  };
}

// ------------------------------------------------------------------ WebSocket (bench/loadgen)

export function loadgenArgs(scenario, peer, port, opts, env) {
  const sc = SCENARIOS[scenario];
  const { protocol, path: urlPath, envelope } = wsTarget(peer, scenario);
  const common = ['--url', `ws://127.0.0.1:${port}${urlPath}`, '--protocol', protocol, '--quiet', ...(envelope ? ['--envelope'] : [])];
  if (sc.mode === 'echo') {
    return [
      env.loadgenBin,
      'echo',
      ...common,
      '--connections',
      String(ECHO_LOAD.connections),
      '--inflight',
      String(ECHO_LOAD.inflight),
      '--size',
      String(sc.size),
      sc.binary ? '--binary' : '--text',
      '--duration',
      String(opts.duration),
      '--warmup',
      String(opts.warmup),
      '--drain',
      '3',
    ];
  }
  if (sc.mode === 'fanout') {
    const f = FANOUT_LOAD;
    return [
      env.loadgenBin,
      'fanout',
      ...common,
      '--subscribers',
      String(f.subscribers),
      '--senders',
      String(f.senders),
      '--burst',
      String(f.burst),
      '--interval-ms',
      String(f.intervalMs),
      '--window',
      String(f.window),
      '--size',
      String(f.size),
      '--duration',
      String(opts.duration),
      '--warmup',
      String(opts.warmup),
      '--drain',
      '3',
    ];
  }
  // connections: spread over 4 loopback source addresses (about 28k ports per source and server port).
  return [
    env.loadgenBin,
    'connections',
    ...common,
    '--count',
    String(sc.count),
    '--hold',
    String(opts.hold),
    '--sources',
    '127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4',
    '--setup-timeout',
    '30',
  ];
}

export async function measureWs(server, scenario, opts, env) {
  const sc = SCENARIOS[scenario];
  const argv = [...loadgenArgs(scenario, server.peer, server.port, opts, env), '--server-pid', String(server.pid)];
  const rss0 = rssKb(server.pid);
  const sys0 = sysNow(env);
  const cpu0 = cpuTicks(server.pid);
  const t0 = performance.now();
  const { text, stderr, cpuS, code } = await runLoad(argv, env, { allowFail: true });
  const wallS = (performance.now() - t0) / 1000;
  if (server.died) throw new Error(`${server.peer} server died during the run (${server.died}): ${server.stderr()}`);
  const cpu1 = cpuTicks(server.pid);
  const sys1 = sysNow(env);
  let r;
  try {
    r = JSON.parse(text.trim().split('\n').pop());
  } catch {
    throw new Error(`loadgen printed no report (exit ${code}): ${stderr.trim().slice(-1000)}`);
  }
  const lat = r.latency_us ?? {};
  const latencyMs = { p50: lat.p50 / 1000, p90: lat.p90 / 1000, p99: lat.p99 / 1000 };
  const out = {
    generator: 'loadgen',
    windowS: r.measured_s,
    wallS,
    latencyMs,
    genBusy: r.cpu_busy ?? undefined,
    genCpuS: cpuS,
    ok: r.ok,
    reasons: r.reasons,
    errors: r.errors ?? 0,
    errorDetail: r.errors ? { kinds: r.error_kinds, samples: r.error_samples } : undefined,
    ...interference(env, sys0, sys1, cpu1 - cpu0, cpuS),
    report: r,
  };
  out.generatorBound = out.genBusy !== undefined && out.genBusy !== null && out.genBusy >= GENERATOR_BOUND;
  const serverCpuS = r.server_cpu?.cpu_s;
  if (sc.mode === 'echo') {
    Object.assign(out, { perSec: r.msgs_per_s, count: r.messages, serverCpuS, serverBusy: r.server_cpu?.busy, unanswered: r.unanswered });
  } else if (sc.mode === 'fanout') {
    const count = Math.round(r.delivered_per_s * r.measured_s);
    Object.assign(out, {
      perSec: r.delivered_per_s,
      count,
      serverCpuS,
      serverBusy: r.server_cpu?.busy,
      sentPerSec: r.sent_per_s,
      fanoutRatio: r.fanout_ratio,
      expectedFanout: r.expected_fanout,
      missing: r.missing,
      // Missing deliveries without errors: the server lost or held back messages (a result, not a harness failure).
      lossy: (r.missing ?? 0) > 0,
    });
  } else {
    Object.assign(out, {
      perSec: r.connect_rate,
      count: r.connected,
      windowS: r.connect_s,
      serverCpuS,
      serverBusy: r.server_cpu?.busy,
      // Connection setup time (TCP connect + upgrade handshake), not a message latency.
      latencyMs: { p50: r.connect_latency_us?.p50 / 1000, p90: r.connect_latency_us?.p90 / 1000, p99: r.connect_latency_us?.p99 / 1000 },
      rssPerConnBytes: r.server_rss_per_conn_bytes,
      rssBeforeKb: r.server_rss_before_kb ?? rss0,
      rssAfterKb: r.server_rss_after_kb,
      stillOpen: r.still_open,
    });
  }
  out.cpuUsPer = serverCpuS !== undefined && out.count ? (serverCpuS * 1e6) / out.count : undefined;
  // A lossy fan-out is reported as such; everything else that made the report not ok is an error.
  if (!r.ok && !out.errors && !(sc.mode === 'fanout' && out.lossy)) out.errors = 1;
  return out;
}
