#!/usr/bin/env node
// The cost of a server → client request (docs/realtime.md, "Requests to the client"):
// `socket.request(event, data)` answered by the client, against the other direction, a client
// request answered by a server event handler, same server, same invocation. Each direction
// keeps K requests outstanding on each of C connections (a new one as each answer arrives);
// round trips per second, the server's CPU per round trip, p50/p99 latency.
//
// Both answers echo a 32-byte string. The asking side measures the latency: the server for its
// requests (performance.now() twice per request, in its CPU figure), the load process for the
// client's. Server: this script with --serve, a fresh process per run, pinned to CPU 0. Load:
// this process on CPU 1, raw WebSocket clients (lib/light-clients.mjs) that answer requests
// and match replies by scanning the frame's first bytes (@tachyon/client's per-frame cost
// would make the load the limit). Warm-up not counted; the directions alternate run by run.
//
//   npm run bench:ws-request [-- --connections 4 --outstanding 1,16 --runs 3 --duration 3 --write]
import { fileURLToPath } from 'node:url';
import { rawWebSocket } from './lib/light-clients.mjs';
import * as pinned from './lib/pinned-bench.mjs';
import { fmtCpu, fmtInt, fmtMs, fmtPct, fmtX, table } from './lib/util.mjs';

const USAGE = `Usage: node bench/ws-request.mjs [options]
  --connections C   WebSocket connections (default 4)
  --outstanding K   requests kept outstanding per connection; a list runs each (default 1,16)
  --runs N          runs per (direction, K), alternating (default 3)
  --duration S      seconds measured per run (default 3)
  --warmup S        seconds of load before each measured window, not counted (default 1)
  --write           save results/ws-request-<time>.json and the section of bench/RESULTS.md
  --smoke           one short run per direction at the last K: checks the script works (CI)`;

const o = pinned.benchOptions({ connections: '4', outstanding: '1,16' }, USAGE);
const ks = pinned.positiveInts(o.outstanding, 'outstanding');
const [connections] = pinned.positiveInts(o.connections, 'connections');
const SCRIPT = fileURLToPath(import.meta.url);
const DATA = '0123456789abcdef0123456789abcdef';
const PAYLOAD = JSON.stringify(DATA);
const REQUEST = Buffer.from('{"type":"request","id":');
const REPLY = Buffer.from('{"type":"reply","ref":');
const CONTROL = 1e9; // refs of the control events (drive, mark, stop), apart from the pings'

if (o.serve) await serve();
else await pinned.runMain('ws-request', main);

/** The server: `ping` answers client requests; `drive`/`mark`/`stop` run its own requests. */
function serve() {
  let driving = false;
  let counting = false;
  let count = 0;
  let errors = 0;
  let lastError;
  let since = 0;
  let samples = [];
  const ask = (ws) => {
    const t = performance.now();
    ws.request('ping', DATA).then(
      () => {
        if (counting) {
          count++;
          samples.push(performance.now() - t);
        }
        if (driving) ask(ws);
      },
      (err) => {
        errors++;
        lastError = `${err.code}: ${err.message}`;
      },
    );
  };
  const pct = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return pinned.serveApp((app) =>
    app.ws('/live', {
      maxPendingRequests: 100_000,
      events: {
        ping: { handler: (_ws, data) => data },
        drive: {
          handler: (ws, k) => {
            driving = true;
            for (let i = 0; i < k; i++) ask(ws);
            return true;
          },
        },
        mark: {
          handler: () => {
            counting = true;
            count = 0;
            samples = [];
            since = performance.now();
            return true;
          },
        },
        stop: {
          handler: () => {
            const ms = performance.now() - since;
            driving = counting = false;
            const sorted = Float64Array.from(samples).sort();
            return { count, ms, p50: pct(sorted, 0.5), p99: pct(sorted, 0.99), errors, lastError };
          },
        },
      },
    }),
  );
}

/** Reads the integer after `prefix` in `payload`, or -1 when the frame does not start with it. */
function numberAfter(payload, prefix) {
  if (payload.length <= prefix.length || payload.compare(prefix, 0, prefix.length, 0, prefix.length) !== 0) return -1;
  let n = 0;
  for (let i = prefix.length; i < payload.length; i++) {
    const c = payload[i];
    if (c < 0x30 || c > 0x39) return n;
    n = n * 10 + c - 0x30;
  }
  return n;
}

/**
 * A load connection. It answers every server request at once, matches replies to its pings
 * (latency), and sends what one read produced in one write. `run.onPingReply()` says whether
 * to send the next ping.
 */
async function connection(port, run) {
  const out = [];
  let flushing = false;
  const flush = () => {
    flushing = false;
    c.ws.sendAll(out);
    out.length = 0;
  };
  const queue = (frame) => {
    out.push(frame);
    if (!flushing) {
      flushing = true;
      queueMicrotask(flush); // after the rest of this read's frames
    }
  };
  const c = {
    ref: 0,
    sentAt: new Map(),
    control: new Map(),
    ping() {
      const ref = ++c.ref;
      c.sentAt.set(ref, performance.now());
      queue(`{"type":"event","event":"ping","data":${PAYLOAD},"ref":${ref}}`);
    },
    /** A control event's reply data. */
    ask(event, data) {
      const ref = CONTROL + ++c.ref;
      c.ws.send(`{"type":"event","event":"${event}","data":${JSON.stringify(data)},"ref":${ref}}`);
      return new Promise((resolve) => c.control.set(ref, resolve));
    },
  };
  c.ws = await rawWebSocket(
    port,
    '/live',
    (payload) => {
      const id = numberAfter(payload, REQUEST);
      if (id >= 0) return queue(`{"type":"reply","id":${id},"data":${PAYLOAD}}`);
      const ref = numberAfter(payload, REPLY);
      const t = c.sentAt.get(ref);
      if (t !== undefined) {
        c.sentAt.delete(ref);
        if (run.onPingReply(performance.now() - t)) c.ping();
      } else if (c.control.has(ref)) {
        c.control.get(ref)(JSON.parse(payload.toString()).data);
        c.control.delete(ref);
      } else run.problem ??= payload.toString().slice(0, 300);
    },
    (why) => (run.closed ??= why),
  );
  return c;
}

function percentile(xs, q) {
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

/** One run: a fresh server, C connections, K outstanding per connection in one direction. */
function roundTrips(direction, k, env) {
  return pinned.withServer(`ws-request (${direction})`, SCRIPT, [], env, async (server) => {
    const run = { counting: false, running: true, count: 0, samples: [], problem: undefined, closed: undefined };
    run.onPingReply = (ms) => {
      if (run.counting) {
        run.count++;
        run.samples.push(ms);
      }
      return run.running;
    };
    const conns = [];
    for (let i = 0; i < connections; i++) conns.push(await connection(server.port, run));
    if (direction === 'client') for (const c of conns) for (let i = 0; i < k; i++) c.ping();
    else await Promise.all(conns.map((c) => c.ask('drive', k)));
    await pinned.sleep(o.warmup);
    if (direction === 'server') await conns[0].ask('mark', null);
    const w0 = pinned.windowStart(server, env);
    run.counting = true;
    await pinned.sleep(o.duration);
    const w = pinned.windowEnd(w0, server, env);
    run.counting = false;
    let r;
    if (direction === 'server') {
      const s = await conns[0].ask('stop', null);
      if (s.errors) throw new Error(`server requests failed: ${s.errors}, last ${s.lastError}`);
      r = { count: s.count, perSec: s.count / (s.ms / 1000), p50: s.p50, p99: s.p99 };
    } else {
      run.running = false;
      r = { count: run.count, perSec: run.count / w.wallS, p50: percentile(run.samples, 0.5), p99: percentile(run.samples, 0.99) };
    }
    // Let the requests still out finish: the server's fail at its stop, and the pings' replies.
    await pinned.until(
      () => run.closed !== undefined || conns.every((c) => c.sentAt.size === 0),
      5000,
      () => `${direction}: pings unanswered after 5 s`,
    );
    for (const c of conns) c.ws.close();
    if (run.closed !== undefined) throw new Error(`${direction}: a connection closed during the run: ${run.closed}`);
    if (run.problem !== undefined) throw new Error(`${direction}: unexpected frame ${run.problem}`);
    if (!r.count) throw new Error(`${direction}: no round trip completed in the window`);
    return { direction, k, ...w, ...r, cpuUsPer: (w.serverCpuS * 1e6) / r.count };
  });
}

async function main() {
  const env = pinned.loadSide();
  const list = o.smoke ? ks.slice(-1) : ks;
  console.log(
    `ws-request: ${connections} connection(s) × K outstanding (K = ${list.join(', ')}); ${o.runs} run(s) × ${o.duration} s after ${o.warmup} s warm-up per (direction, K)${o.smoke ? ' (smoke: checks only)' : ''}`,
  );
  const directions = { server: 'server → client: socket.request()', client: 'client → server: an event handler' };
  const runs = [];
  for (const k of list)
    for (let i = 0; i < o.runs; i++)
      for (const d of Object.keys(directions)) {
        const r = await roundTrips(d, k, env);
        runs.push(r);
        console.log(
          `  K=${k} ${d.padEnd(6)} run ${i + 1}/${o.runs}: ${fmtInt(r.perSec).padStart(8)} round trips/s  ${fmtCpu(r.cpuUsPer)} µs CPU each  p50 ${fmtMs(r.p50)}  p99 ${fmtMs(r.p99)}  server ${fmtPct(r.serverBusy)}  load ${fmtPct(r.loadBusy)}${r.generatorBound ? ' LOAD-BOUND' : ''}${r.contended ? ' NOISY' : ''}`,
        );
      }
  if (o.smoke) return console.log('ws-request: smoke ok (both directions answered, no errors)');
  const rows = [];
  for (const k of list) {
    const base = runs.filter((r) => r.k === k && r.direction === 'client');
    for (const d of Object.keys(directions)) {
      const rs = runs.filter((r) => r.k === k && r.direction === d);
      rows.push([
        String(connections * k),
        directions[d],
        fmtInt(pinned.med(rs, 'perSec')),
        fmtCpu(pinned.med(rs, 'cpuUsPer')),
        fmtX(pinned.med(rs, 'cpuUsPer') / pinned.med(base, 'cpuUsPer')),
        fmtMs(pinned.med(rs, 'p50')),
        fmtMs(pinned.med(rs, 'p99')),
        `${fmtPct(pinned.med(rs, 'serverBusy'))} / ${fmtPct(pinned.med(rs, 'loadBusy'))}`,
        pinned.flags(rs) || '—',
      ]);
    }
  }
  const out = table(
    [
      'in flight',
      'direction',
      'round trips/s (median)',
      'server CPU µs/round trip',
      '× client → server',
      'p50',
      'p99',
      'server / load CPU',
      'flags',
    ],
    rows,
    new Set([0, 2, 3, 4, 5, 6]),
  );
  console.log(`\n${out}`);
  if (!o.write) return;
  pinned.writeResults('ws-request', {
    title: 'Requests both ways: server → client against client → server',
    about: `${connections} WebSocket connections, each keeping K requests outstanding (\`in flight\` = ${connections} × K); each answer echoes a 32-byte string; latency measured by the asking side. Server pinned to CPU 0, load (raw WebSocket clients) to CPU 1; median of ${o.runs} runs of ${o.duration} s after ${o.warmup} s of warm-up, a fresh server each, the directions alternating.`,
    table: out,
    options: o,
    runs,
  });
}
