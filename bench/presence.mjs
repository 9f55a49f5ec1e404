#!/usr/bin/env node
// The cost of presence (docs/presence.md): the same server with presence on its topics and
// without, in the same run.
//  1. fan-out on a presence topic vs a plain topic: bench/loadgen fanout (the ws-fanout load
//     of the suite: 50 subscribers, 10 of them sending bursts of 10), deliveries/s;
//  2. subscribe/unsubscribe churn: topic subscriptions + unsubscriptions per second, each one
//     a member joining or leaving (bench/presence-churn-client.mjs), presence off, on, and on
//     with join/leave events.
// Server pinned to CPU 0, load generator to CPU 1, fresh server process per run, warm-up,
// the variants alternate run by run; medians and same-run ratios.
//   node bench/presence.mjs [--runs 3] [--duration 3]
import path from 'node:path';
import { ensureLoadgen, LOADGEN_BIN } from './lib/env.mjs';
import { installSignalHandlers, runLoad, startServer, stopServer } from './lib/procs.mjs';
import { BENCH_DIR, median } from './lib/util.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const runs = opt('runs', 3);
const duration = opt('duration', 3);
const env = { pin: true, serverCpu: 0, loadCpu: 1 };
installSignalHandlers();
const loadgen = ensureLoadgen((m) => console.error(m));
if (loadgen.error) throw new Error(loadgen.error);

const VARIANTS = { off: { PRESENCE: '0' }, on: { PRESENCE: '1' }, 'on+events': { PRESENCE: '1', PRESENCE_EVENTS: '1' } };

async function withServer(variant, fn) {
  const saved = { ...process.env };
  Object.assign(process.env, VARIANTS[variant]);
  const server = await startServer(`tachyon-presence-${variant}`, [process.execPath, 'servers/tachyon-presence.mjs'], env);
  Object.assign(process.env, saved);
  for (const k of Object.keys(VARIANTS[variant])) if (!(k in saved)) delete process.env[k];
  try {
    return await fn(server.port);
  } finally {
    await stopServer(server);
  }
}

async function fanout(variant) {
  return withServer(variant, async (port) => {
    const argv = [
      LOADGEN_BIN,
      'fanout',
      '--protocol',
      'tachyon',
      '--url',
      `ws://127.0.0.1:${port}/fanout`,
      '--subscribers',
      '50',
      '--senders',
      '10',
      '--burst',
      '10',
      '--interval-ms',
      '0',
      '--window',
      '16',
      '--size',
      '64',
      '--duration',
      String(duration),
      '--warmup',
      '1',
      '--drain',
      '3',
      '--quiet',
    ];
    const rep = JSON.parse((await runLoad(argv, env)).text);
    if (rep.ok !== true) throw new Error(`fanout ${variant}: ${JSON.stringify(rep.reasons)}`);
    return rep.delivered_per_s;
  });
}

async function churn(variant) {
  return withServer(variant, async (port) => {
    const argv = [
      process.execPath,
      path.join(BENCH_DIR, 'presence-churn-client.mjs'),
      `ws://127.0.0.1:${port}/churn`,
      '8',
      '50',
      '1',
      String(duration),
    ];
    return JSON.parse((await runLoad(argv, env)).text).ops_per_s;
  });
}

const results = { fanout: { off: [], on: [] }, churn: { off: [], on: [], 'on+events': [] } };
for (let r = 0; r < runs; r++) {
  for (const v of Object.keys(results.fanout)) results.fanout[v].push(await fanout(v));
  for (const v of Object.keys(results.churn)) results.churn[v].push(await churn(v));
  console.error(`run ${r + 1}/${runs}: ${JSON.stringify(results)}`);
}
const m = (xs) => Math.round(median(xs));
const summary = {
  runs,
  duration,
  fanout_deliveries_per_s: {
    plain: m(results.fanout.off),
    presence: m(results.fanout.on),
    ratio: +(median(results.fanout.on) / median(results.fanout.off)).toFixed(2),
  },
  churn_ops_per_s: {
    off: m(results.churn.off),
    on: m(results.churn.on),
    'on+events': m(results.churn['on+events']),
    ratio_on: +(median(results.churn.on) / median(results.churn.off)).toFixed(2),
    ratio_on_events: +(median(results.churn['on+events']) / median(results.churn.off)).toFixed(2),
  },
};
console.log(JSON.stringify(summary, null, 2));
process.exit(0);
