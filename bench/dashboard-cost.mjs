#!/usr/bin/env node
// The dashboard's cost (docs/dashboard.md, "Cost"): server CPU per request on one route, for
// an app without the dashboard, with it and no page open, and with one page open. The server
// runs pinned to core 0, wrk to core 1; CPU is the server process's utime+stime from /proc
// over the run. Variants alternate within one invocation (ratios only within a run).
//   node bench/dashboard-cost.mjs [--runs 3] [--duration 5]
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? dflt : args[i + 1];
};

if (opt('serve', null) !== null) {
  const { App } = await import('../packages/server/dist/index.js');
  const { dashboard } = await import('../packages/dashboard/dist/index.js');
  const app = new App();
  if (opt('serve') !== 'none') await app.register(dashboard());
  app.get('/users/:id', (req) => ({ id: req.params.id, name: 'Ann', roles: ['admin', 'ops'] }));
  const server = await app.listen(0, '127.0.0.1');
  console.log(JSON.stringify({ port: server.port }));
} else {
  const runs = Number(opt('runs', 3));
  const duration = Number(opt('duration', 5));
  const ticks = Number(execFileSync('getconf', ['CLK_TCK']).toString());
  const cpuOf = (pid) => {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / ticks; // utime + stime, seconds
  };
  const measure = async (variant) => {
    const child = spawn(
      'taskset',
      ['-c', '0', process.execPath, new URL(import.meta.url).pathname, '--serve', variant === 'page' ? 'dash' : variant],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
        env: { ...process.env, TACHYON_LOG: 'warn' },
      },
    );
    const port = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(JSON.parse(String(d)).port)));
    let page = null;
    if (variant === 'page') {
      page = new WebSocket(`ws://127.0.0.1:${port}/_tachyon/ws`);
      await new Promise((r) => (page.onopen = r));
    }
    const url = `http://127.0.0.1:${port}/users/7`;
    execFileSync('taskset', ['-c', '1', 'wrk', '-t1', '-c32', '-d1s', url]); // warm-up
    const before = cpuOf(child.pid);
    const out = execFileSync('taskset', ['-c', '1', 'wrk', '-t1', '-c32', `-d${duration}s`, url]).toString();
    const cpu = cpuOf(child.pid) - before;
    const requests = Number(/(\d+) requests in/.exec(out)[1]);
    page?.close();
    child.kill();
    return { rps: requests / duration, usPerRequest: (cpu * 1e6) / requests };
  };
  const variants = ['none', 'dash', 'page'];
  const results = Object.fromEntries(variants.map((v) => [v, []]));
  for (let r = 0; r < runs; r++) for (const v of variants) results[v].push(await measure(v));
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`server CPU per request, GET /users/:id, wrk -t1 -c32 -d${duration}s, ${runs} runs each (median; all runs)`);
  for (const v of variants) {
    const us = results[v].map((x) => x.usPerRequest);
    const rps = results[v].map((x) => x.rps);
    const name = { none: 'no dashboard', dash: 'dashboard, no page open', page: 'dashboard, one page open' }[v];
    console.log(
      `${name.padEnd(26)} ${median(us).toFixed(2)} µs/req  ${Math.round(median(rps))} req/s   [${us.map((x) => x.toFixed(2)).join(', ')}]`,
    );
  }
}
