#!/usr/bin/env node
// `npm run conformance:autobahn -- [--cases 1.*,9.*] [--exclude 12.*] [--agent plain|deflate]
// [--out DIR]`: runs Autobahn|Testsuite's fuzzing client (`wstest -m fuzzingclient`) against
// scripts/autobahn-server.mjs, a Tachyon app echoing every message on `/echo` (no compression)
// and `/echo-deflate` (permessage-deflate), then sums up reports/index.json per route.
//
// wstest (PyPI autobahntestsuite 0.8.2) runs on Python 2.7 only: the runner looks for one
// (PYTHON2, then pyenv's 2.7.x, then python2.7 on PATH), makes a virtualenv for it
// (AUTOBAHN_VENV, default <tmpdir>/autobahn-venv) and installs the pinned versions of
// scripts/autobahn-requirements.txt there when wstest is missing. It is not part of npm test
// or CI because of that Python 2. Exits 1 when a case FAILED (or the run broke), else 0.
// The HTML reports go to --out (default <tmpdir>/tachyon-autobahn), never into the repository.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatSummary, summarize } from './autobahn-summary.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(here);

function parseArgs(argv) {
  const out = { cases: ['*'], exclude: [], agents: ['plain', 'deflate'], out: join(tmpdir(), 'tachyon-autobahn') };
  const list = (v) => String(v).split(',').filter(Boolean);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--cases') out.cases = list(argv[++i]);
    else if (a === '--exclude') out.exclude = list(argv[++i]);
    else if (a === '--agent') out.agents = list(argv[++i]);
    else if (a === '--out') out.out = String(argv[++i]);
    else throw new Error(`unknown argument ${a} (use --cases, --exclude, --agent plain|deflate, --out DIR)`);
  }
  for (const agent of out.agents)
    if (agent !== 'plain' && agent !== 'deflate') throw new Error(`--agent: ${agent} is neither plain nor deflate`);
  return out;
}

/** A Python 2.7 interpreter, or null. */
function findPython2() {
  const pyenv = join(process.env.PYENV_ROOT ?? join(homedir(), '.pyenv'), 'versions');
  const candidates = [process.env.PYTHON2];
  if (existsSync(pyenv))
    for (const v of readdirSync(pyenv)
      .filter((v) => v.startsWith('2.7'))
      .sort()
      .reverse())
      candidates.push(join(pyenv, v, 'bin', 'python'));
  candidates.push('python2.7', 'python2');
  for (const py of candidates) {
    if (!py) continue;
    const r = spawnSync(py, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim() === '2.7') return py;
  }
  return null;
}

function run(cmd, args, what) {
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`${what} failed (${cmd} ${args.join(' ')}: exit ${r.status ?? r.signal ?? r.error?.message})`);
}

/** The venv's wstest, made (virtualenv + pinned pip install) when missing. */
function ensureWstest() {
  const venv = process.env.AUTOBAHN_VENV ?? join(tmpdir(), 'autobahn-venv');
  const wstest = join(venv, 'bin', 'wstest');
  if (existsSync(wstest)) return wstest;
  const py = findPython2();
  if (py === null) {
    throw new Error(
      'Autobahn|Testsuite needs Python 2.7 and none was found (PYTHON2, ~/.pyenv/versions/2.7.*, python2.7 on PATH). ' +
        'Install one (e.g. `pyenv install 2.7.18`) or point PYTHON2 at it.',
    );
  }
  if (!existsSync(join(venv, 'bin', 'python'))) {
    if (spawnSync(py, ['-m', 'virtualenv', '--version'], { stdio: 'ignore' }).status !== 0) {
      throw new Error(
        `${py} has no virtualenv module: install it with \`${py} -m pip install 'virtualenv<20.22'\` (the last line that makes Python 2 environments)`,
      );
    }
    console.log(`autobahn: creating ${venv} with ${py}`);
    run(py, ['-m', 'virtualenv', '-q', venv], 'virtualenv');
  }
  const reqs = join(here, 'autobahn-requirements.txt');
  console.log(`autobahn: installing autobahntestsuite into ${venv} (pinned: ${reqs})`);
  run(join(venv, 'bin', 'pip'), ['install', '-q', '--disable-pip-version-check', '-r', reqs], 'pip install');
  if (!existsSync(wstest)) throw new Error(`pip install ran but ${wstest} is missing`);
  return wstest;
}

/**
 * Starts the echo server, its output (a warn line per socket uWS closes for a protocol
 * violation: hundreds in a run) going to `logFile`; resolves with its port once it is ready.
 */
function startServer(logFile) {
  const log = openSync(logFile, 'w');
  const child = spawn(join(root, 'node_modules', '.bin', 'node'), [join(here, 'autobahn-server.mjs')], {
    stdio: ['ignore', 'pipe', log],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`the echo server exited (${code}) before it was ready: see ${logFile}`)));
    child.stdout.on('data', (chunk) => {
      writeSync(log, chunk);
      out += chunk;
      const m = /READY (\d+)/.exec(out);
      if (m) {
        child.removeAllListeners('exit');
        child.stdout.removeAllListeners('data');
        child.stdout.on('data', (c) => writeSync(log, c));
        resolve({ port: Number(m[1]), child });
      }
    });
  });
}

/** How many lines of the server's log are at each level: `warn 194, error 0`. */
function logLevels(logFile) {
  const counts = { warn: 0, error: 0, fatal: 0 };
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    const level = /^\{"level":"(\w+)"/.exec(line)?.[1];
    if (level !== undefined && level in counts) counts[level]++;
  }
  return Object.entries(counts)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!existsSync(join(root, 'packages', 'server', 'dist', 'index.js')))
    throw new Error('packages/server/dist is missing: run `npx tsc -b packages/server` first');
  const wstest = ensureWstest();
  mkdirSync(args.out, { recursive: true });
  const serverLog = join(args.out, 'server.log');
  const { port, child } = await startServer(serverLog);
  try {
    const urls = { plain: `ws://127.0.0.1:${port}/echo`, deflate: `ws://127.0.0.1:${port}/echo-deflate` };
    const config = {
      outdir: join(args.out, 'reports'),
      servers: args.agents.map((a) => ({ agent: `tachyon-${a}`, url: urls[a] })),
      cases: args.cases,
      'exclude-cases': args.exclude,
      'exclude-agent-cases': {},
    };
    const configFile = join(args.out, 'fuzzingclient.json');
    writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`);
    const version = spawnSync(wstest, ['--autobahnversion'], { encoding: 'utf8' });
    console.log(`autobahn: ${(version.stdout || version.stderr).trim().split('\n').at(-1)}; config ${configFile}`);
    const started = Date.now();
    const wst = spawnSync(wstest, ['-m', 'fuzzingclient', '-s', configFile], { cwd: args.out, encoding: 'utf8', maxBuffer: 256 << 20 });
    const log = join(args.out, 'wstest.log');
    writeFileSync(log, `${wst.stdout ?? ''}${wst.stderr ?? ''}`);
    if (wst.status !== 0)
      throw new Error(`wstest exited ${wst.status ?? wst.signal}: see ${log}\n${(wst.stderr ?? '').split('\n').slice(-15).join('\n')}`);
    // A server that died mid-run fails the run, whatever the report says of the cases before.
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the echo server died during the run (${child.exitCode ?? child.signalCode}): see ${serverLog}`);
    const index = join(config.outdir, 'index.json');
    // wstest writes every report at the end: stopped before it (Twisted exits 0 on SIGTERM), none.
    if (!existsSync(index)) throw new Error(`wstest wrote no ${index} (stopped before the end of the run?): see ${log}`);
    const summary = summarize(JSON.parse(readFileSync(index, 'utf8')));
    console.log(`autobahn: ${((Date.now() - started) / 1000).toFixed(0)} s; reports ${join(config.outdir, 'index.html')}`);
    for (const line of formatSummary(summary)) console.log(line);
    console.log(`server log lines: ${logLevels(serverLog)} (${serverLog})`);
    return Object.values(summary).some((s) => s.counts.FAILED > 0) ? 1 : 0;
  } finally {
    child.kill('SIGTERM');
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`autobahn: ${err.message}`);
    process.exit(1);
  },
);
