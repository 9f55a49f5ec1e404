#!/usr/bin/env node
// The fallback transport's cost (docs/realtime.md, "Fallback transport"): fan-out to N
// subscribers of one topic over Server-Sent Events against the same over WebSockets, same
// server code (one `app.ws('/live', { fallback: true })` route), same invocation. A publisher
// (a WebSocket in both cases: the publish side is the same, only the delivery differs) sends
// 64-byte events as fast as the slowest subscriber keeps up: at most --window events in flight
// past the slowest one. Deliveries per second and the server's CPU per delivery.
//
// Server: this script with --serve, a fresh process per run, pinned to CPU 0. Load: this
// process on CPU 1, with light clients (lib/light-clients.mjs: a raw WebSocket, an SSE reader
// counting events) rather than @tachyon/client, whose per-message cost would make the load the
// limit. Warm-up not counted; the two transports alternate run by run; medians of --runs.
//
//   npm run bench:sse-fanout [-- --subscribers 50 --runs 3 --duration 3 --warmup 1 --window 100 --write]
import { fileURLToPath } from 'node:url';
import { occurrenceCounter, rawWebSocket, sseSession, textFrames } from './lib/light-clients.mjs';
import * as pinned from './lib/pinned-bench.mjs';
import { fmtCpu, fmtInt, fmtPct, fmtX, table } from './lib/util.mjs';

const USAGE = `Usage: node bench/sse-fanout.mjs [options]
  --subscribers N   subscribers on the topic (default 50)
  --window N        events in flight past the slowest subscriber (default 100)
  --payload N       bytes of the event's data string (default 64)
  --runs N          runs per transport, alternating (default 3)
  --duration S      seconds measured per run (default 3)
  --warmup S        seconds of load before each measured window, not counted (default 1)
  --write           save results/sse-fanout-<time>.json and the section of bench/RESULTS.md
  --smoke           one short run per transport: checks the script works (CI), figures meaningless`;

const o = pinned.benchOptions({ subscribers: '50', window: '100', payload: '64' }, USAGE);
for (const k of ['subscribers', 'window', 'payload']) [o[k]] = pinned.positiveInts(o[k], k);
const TOPIC = 'bench';
const SCRIPT = fileURLToPath(import.meta.url);

if (o.serve) await serve();
else await pinned.runMain('sse-fanout', main);

function serve() {
  return pinned.serveApp((app) =>
    app.ws('/live', {
      fallback: true,
      events: { 'bench:publish': { handler: (_ws, data) => void app.publish(TOPIC, 'bench', data) } },
    }),
  );
}

/** One subscriber on either transport; `delivered(s, n)` is called for every n events it counts. */
async function subscriber(transport, port, delivered, onClose) {
  const s = { count: 0, ready: false, problem: undefined, close: () => {} };
  let resolveReady;
  const isReady = new Promise((r) => (resolveReady = r));
  let head = ''; // what arrived before the subscribed answer (a frame may come in two reads)
  const setup = (text) => {
    head += text;
    if (head.includes('"type":"subscribed"')) {
      s.ready = true;
      resolveReady();
    } else if (head.includes('"type":"denied"') || head.includes('"type":"error"')) s.problem = head.slice(0, 300);
  };
  if (transport === 'sse') {
    const count = occurrenceCounter(`data: {"topic":"${TOPIC}"`);
    const session = await sseSession(port, '/live', (text) => (s.ready ? delivered(s, count(text)) : setup(text)), onClose);
    s.close = session.close;
    await session.post([`{"type":"subscribe","topic":"${TOPIC}","ref":1}`]);
  } else {
    const ws = await rawWebSocket(
      port,
      '/live',
      (payload) => {
        if (!s.ready) return setup(payload.toString());
        // An event frame starts {"topic": ; anything else is a problem worth reporting.
        if (payload[2] !== 0x74) s.problem ??= payload.toString().slice(0, 300);
        delivered(s, 1);
      },
      onClose,
    );
    s.close = ws.close;
    ws.send(`{"type":"subscribe","topic":"${TOPIC}","ref":1}`);
  }
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${transport} subscriber: no subscribed answer in 5 s (${s.problem ?? 'nothing'})`)), 5000);
  });
  await Promise.race([isReady, late]).finally(() => clearTimeout(timer));
  return s;
}

/** One run: a fresh server, N subscribers, the publisher held to --window past the slowest. */
function fanout(transport, env) {
  return pinned.withServer(`sse-fanout (${transport})`, SCRIPT, [], env, async (server) => {
    const n = o.subscribers;
    const half = Math.max(1, o.window >> 1);
    let delivered = 0;
    let sent = 0;
    let threshold = 0; // the count every subscriber must reach before the next batch
    let reached = 0;
    let stopped = false;
    let closedEarly;
    const subs = [];
    let publisher;
    const batch = textFrames(
      Array.from({ length: half }, () => `{"type":"event","event":"bench:publish","data":"${'x'.repeat(o.payload)}"}`),
    );
    const next = () => {
      // Every subscriber is within `half` of `sent`: publish `half` more (in flight ≤ window).
      while (reached === n && !stopped) {
        publisher.socket.write(batch);
        sent += half;
        threshold = sent - half;
        reached = 0;
        for (const s of subs) if (s.count >= threshold) reached++;
      }
    };
    const onDelivered = (s, k) => {
      for (let i = 0; i < k; i++) if (++s.count === threshold) reached++;
      delivered += k;
      if (reached === n) next();
    };
    const onClose = (why) => {
      if (!stopped) closedEarly ??= why;
    };
    for (let i = 0; i < n; i++) subs.push(await subscriber(transport, server.port, onDelivered, onClose));
    publisher = await rawWebSocket(server.port, '/live', () => {}, onClose);

    reached = n;
    next();
    await pinned.sleep(o.warmup);
    const w0 = pinned.windowStart(server, env);
    const d0 = delivered;
    await pinned.sleep(o.duration);
    const w = pinned.windowEnd(w0, server, env);
    const count = delivered - d0;
    stopped = true;
    // Every event published must reach every subscriber, once.
    await pinned.until(
      () => closedEarly !== undefined || subs.every((s) => s.count >= sent),
      10_000,
      () => `${transport}: not delivered after 10 s: ${subs.filter((s) => s.count < sent).length} subscriber(s) short of ${sent}`,
    );
    for (const s of [...subs, publisher]) s.close();
    if (closedEarly !== undefined) throw new Error(`${transport}: a connection closed during the run: ${closedEarly}`);
    const bad = subs.find((s) => s.count !== sent || s.problem);
    if (bad) throw new Error(`${transport}: a subscriber counted ${bad.count} of ${sent}${bad.problem ? `, got ${bad.problem}` : ''}`);
    return { transport, ...w, deliveries: count, published: sent, perSec: count / w.wallS, cpuUsPer: (w.serverCpuS * 1e6) / count };
  });
}

async function main() {
  const env = pinned.loadSide();
  const transports = ['websocket', 'sse'];
  console.log(
    `sse-fanout: ${o.subscribers} subscribers, ${o.payload}-byte events, ≤ ${o.window} in flight past the slowest; ${o.runs} run(s) × ${o.duration} s after ${o.warmup} s warm-up per transport${o.smoke ? ' (smoke: checks only)' : ''}`,
  );
  const runs = { websocket: [], sse: [] };
  for (let i = 0; i < o.runs; i++)
    for (const t of transports) {
      const r = await fanout(t, env);
      runs[t].push(r);
      console.log(
        `  ${t.padEnd(9)} run ${i + 1}/${o.runs}: ${fmtInt(r.perSec).padStart(9)} deliveries/s  ${fmtCpu(r.cpuUsPer)} µs CPU/delivery  server ${fmtPct(r.serverBusy)}  load ${fmtPct(r.loadBusy)}${r.generatorBound ? ' LOAD-BOUND' : ''}${r.contended ? ' NOISY' : ''}`,
      );
    }
  if (o.smoke) return console.log('sse-fanout: smoke ok (every event reached every subscriber on both transports)');
  const ws = runs.websocket;
  const rows = transports.map((t) => [
    t === 'sse' ? 'SSE (fallback)' : 'WebSocket',
    fmtInt(pinned.med(runs[t], 'perSec')),
    fmtX(pinned.med(runs[t], 'perSec') / pinned.med(ws, 'perSec')),
    fmtCpu(pinned.med(runs[t], 'cpuUsPer')),
    fmtX(pinned.med(runs[t], 'cpuUsPer') / pinned.med(ws, 'cpuUsPer')),
    `${fmtPct(pinned.med(runs[t], 'serverBusy'))} / ${fmtPct(pinned.med(runs[t], 'loadBusy'))}`,
    pinned.flags(runs[t]) || '—',
  ]);
  const out = table(
    ['transport', 'deliveries/s (median)', '× WebSocket', 'server CPU µs/delivery', '× WebSocket', 'server / load CPU', 'flags'],
    rows,
    new Set([1, 2, 3, 4]),
  );
  console.log(`\n${out}`);
  if (!o.write) return;
  pinned.writeResults('sse-fanout', {
    title: 'Fallback transport: SSE against WebSocket on fan-out',
    about: `${o.subscribers} subscribers on one topic of a \`fallback: true\` route, a WebSocket publisher held to ${o.window} events in flight past the slowest subscriber, ${o.payload}-byte events; server pinned to CPU 0, load (raw WebSocket clients and SSE readers over \`node:http\`) to CPU 1; median of ${o.runs} runs of ${o.duration} s after ${o.warmup} s of warm-up, a fresh server each, the transports alternating.`,
    table: out,
    options: o,
    runs,
  });
}
