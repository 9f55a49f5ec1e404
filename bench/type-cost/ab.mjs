#!/usr/bin/env node
// The typed clients' check time, old declarations against new, alternately in one invocation
// (check time on a shared machine moves by a third between runs: only same-run figures compare).
// Run `node bench/type-cost/run.mjs 200 50` first (it writes gen/), then:
//   node bench/type-cost/ab.mjs --old <a copy of packages/client/dist from the older build> [--rounds 5]
// Each round checks the app alone once and the client program with each build of the client's
// declarations; prints the per-round figures and the medians of what the clients add.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values: o } = parseArgs({ options: { old: { type: 'string' }, rounds: { type: 'string', default: '5' } } });
if (!o.old) throw new Error('--old <dir>: the older build of packages/client/dist');
const root = fileURLToPath(new URL('../../', import.meta.url));
const dist = join(root, 'packages/client/dist');
const gen = fileURLToPath(new URL('./gen/', import.meta.url));
const tsc = join(root, 'node_modules/typescript/bin/tsc');
const keep = mkdtempSync(join(tmpdir(), 'client-dist-'));
cpSync(dist, keep, { recursive: true });
const builds = { old: o.old, new: keep };

// Wall-clock "Check time" counts the time another process held the core; the CPU time of the
// whole tsc process (user + system, printed at exit by this preload) counts only tsc's work.
const cpuAtExit = `data:text/javascript,process.on('exit',()=>{const u=process.cpuUsage();console.log('CPU time: '+((u.user+u.system)/1e6).toFixed(2)+'s')})`;
function check(config) {
  const out = execFileSync(process.execPath, ['--import', cpuAtExit, tsc, '-p', join(gen, config), '--extendedDiagnostics'], {
    encoding: 'utf8',
  });
  return {
    seconds: Number(/Check time:\s+([\d.]+)s/.exec(out)[1]),
    cpu: Number(/CPU time: ([\d.]+)s/.exec(out)[1]),
    instantiations: Number(/Instantiations:\s+(\d+)/.exec(out)[1]),
  };
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const added = { old: [], new: [] };
const addedCpu = { old: [], new: [] };
try {
  for (let round = 1; round <= Number(o.rounds); round++) {
    const app = check('tsconfig.app.json');
    for (const which of ['old', 'new']) {
      rmSync(dist, { recursive: true, force: true });
      cpSync(builds[which], dist, { recursive: true });
      const c = check('tsconfig.client.json');
      added[which].push(c.seconds - app.seconds);
      addedCpu[which].push(c.cpu - app.cpu);
      console.log(
        `round ${round}: app ${app.seconds} s; ${which}: ${c.instantiations} instantiations (+${c.instantiations - app.instantiations}), ${c.seconds} s (+${(c.seconds - app.seconds).toFixed(2)} s) check time, CPU ${c.cpu} s (+${(c.cpu - app.cpu).toFixed(2)} s)`,
      );
    }
  }
} finally {
  rmSync(dist, { recursive: true, force: true });
  cpSync(keep, dist, { recursive: true });
  rmSync(keep, { recursive: true, force: true });
}
for (const which of ['old', 'new'])
  console.log(
    `${which}: the clients add a median of ${median(added[which]).toFixed(2)} s of check time, ${median(addedCpu[which]).toFixed(2)} s of tsc's CPU time`,
  );
