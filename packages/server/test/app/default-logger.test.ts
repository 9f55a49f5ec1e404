// The logger an App gets when it is given none: stderr, readable in a terminal or under
// NODE_ENV=development, JSON lines otherwise. Each case runs logger-child.ts in its own
// process (the format is chosen once per process) and reads its stderr as a user would.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { stderrLogger } from '../../src/index.ts';
import { selfSignedCert } from '../helpers.ts';

const CHILD = fileURLToPath(new URL('./logger-child.ts', import.meta.url));

/** Runs the child with `env` added to a clean environment (no NODE_ENV, TACHYON_LOG, NO_COLOR). */
function run(mode: string, env: Record<string, string> = {}): { stdout: string; stderr: string } {
  const base = { ...process.env };
  for (const k of ['NODE_ENV', 'TACHYON_LOG', 'NO_COLOR', 'FORCE_COLOR']) delete base[k];
  const out = spawnSync(process.execPath, [CHILD, mode], { encoding: 'utf8', timeout: 60_000, env: { ...base, ...env } });
  assert.equal(out.status, 0, `child failed:\n${out.stderr}`);
  return { stdout: out.stdout, stderr: out.stderr };
}

const jsonLines = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, any>);
const urlOf = (stdout: string) => /^ready (\S+)$/m.exec(stdout)![1]!;

describe('the default logger', () => {
  test('stderr is a pipe: JSON lines with the listening URL, the thrown error with its stack, each misuse with its route', () => {
    const { stdout, stderr } = run('errors');
    const url = urlOf(stdout);
    const lines = jsonLines(stderr);
    assert.deepEqual(
      lines.map((l) => [l.level, l.msg]),
      [
        ['info', `listening on ${url}`],
        ['error', 'request failed'],
        ['error', 'error after the response was sent'],
        ['error', 'error after the response was sent'],
        ['error', 'error after the response was sent'],
      ],
    );
    assert.equal(lines[0]!.url, url);
    assert.equal(typeof lines[0]!.time, 'number');
    assert.deepEqual(
      [lines[1]!.method, lines[1]!.route, lines[1]!.url, lines[1]!.err.type, lines[1]!.err.message],
      ['GET', '/throw/:id', '/throw/1', 'Error', 'boom'],
    );
    assert.match(lines[1]!.err.stack, /^Error: boom\n {4}at .*logger-child\.ts/);
    // Outside production, misuse throws at the call (its stack shows where) and is logged with the route.
    const misuse = lines.slice(2).map((l) => [l.route, l.err.message.split(':')[0]]);
    assert.deepEqual(misuse, [
      ['/twice', 'res.json() after the response was sent (GET /twice)'],
      ['/returned', 'a value returned by the handler after the response was sent (GET /returned)'],
      ['/header', 'res.header() after the response was sent (GET /header)'],
    ]);
  });

  test('NODE_ENV=production: misuse is a warning with the route (the response stands)', () => {
    const lines = jsonLines(run('errors', { NODE_ENV: 'production' }).stderr);
    const warnings = lines.filter((l) => l.level === 'warn').map((l) => [l.method, l.route, l.msg.split(':')[0]]);
    assert.deepEqual(warnings, [
      ['GET', '/twice', 'res.json() after the response was sent (GET /twice)'],
      ['GET', '/returned', 'a value returned by the handler after the response was sent (GET /returned)'],
      ['GET', '/header', 'res.header() after the response was sent (GET /header)'],
    ]);
    assert.ok(lines.every((l) => l.msg.endsWith('; ignored') || l.level !== 'warn'));
  });

  test('NODE_ENV=development: readable lines, the stack indented below, no colors on a pipe', () => {
    const { stdout, stderr } = run('errors', { NODE_ENV: 'development' });
    const url = urlOf(stdout);
    const lines = stderr.split('\n');
    assert.match(lines[0]!, new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO  listening on ${url.replace(/[.]/g, '\\.')} port=\\d+$`));
    assert.match(lines[1]!, /^\d\d:\d\d:\d\d\.\d{3} ERROR request failed method=GET route=\/throw\/:id url=\/throw\/1$/);
    assert.equal(lines[2], '    Error: boom');
    assert.match(lines[3]!, /^ {8}at .*logger-child\.ts:\d+:\d+/);
    assert.ok(!stderr.includes('\x1b['), 'no ANSI colors when stderr is not a terminal');
    assert.match(
      stderr,
      /ERROR error after the response was sent method=GET route=\/twice url=\/twice\n {4}Error: res\.json\(\) after the response was sent \(GET \/twice\)/,
    );
  });

  test('stderr is a terminal: readable lines, with colored levels', () => {
    // `script` runs the child on a pseudo-terminal; its output (stdout and stderr) comes back on ours.
    const base = { ...process.env };
    for (const k of ['NODE_ENV', 'TACHYON_LOG', 'NO_COLOR']) delete base[k];
    const out = execFileSync('script', ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(CHILD)} errors`, '/dev/null'], {
      encoding: 'utf8',
      env: base,
      timeout: 60_000,
    });
    const text = out.replace(/\r\n/g, '\n');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the ANSI colour escapes are what is tested
    assert.match(text, /\d\d:\d\d:\d\d\.\d{3} \x1b\[36mINFO \x1b\[0m listening on http:\/\/127\.0\.0\.1:\d+/);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the ANSI colour escapes are what is tested
    assert.match(text, /\x1b\[31mERROR\x1b\[0m request failed method=GET route=\/throw\/:id url=\/throw\/1\n {4}Error: boom\n/);
    assert.ok(!text.includes('{"level"'), 'no JSON lines on a terminal');
  });

  test('TACHYON_LOG sets its level: warn drops the listening line, silent drops everything', () => {
    const warn = jsonLines(run('errors', { TACHYON_LOG: 'warn' }).stderr);
    assert.equal(warn.length, 4);
    assert.ok(warn.every((l) => l.level === 'error'));
    assert.equal(run('errors', { TACHYON_LOG: 'silent' }).stderr, '');
  });

  test('silentLogger, when asked for, says nothing', () => {
    assert.equal(run('silent').stderr, '');
  });

  describe('the listening line', () => {
    test('https with tls', () => {
      const { key, cert } = selfSignedCert();
      const { stdout, stderr } = run('tls', { TLS_KEY: key, TLS_CERT: cert });
      const url = urlOf(stdout);
      assert.match(url, /^https:\/\/127\.0\.0\.1:\d+$/);
      assert.deepEqual(
        jsonLines(stderr).map((l) => [l.level, l.msg, l.url]),
        [['info', `listening on ${url}`, url]],
      );
    });

    test('cluster(): one line, from the primary, with the worker count', () => {
      const { stdout, stderr } = run('cluster');
      const url = urlOf(stdout);
      const lines = jsonLines(stderr).filter((l) => l.msg.startsWith('listening'));
      assert.deepEqual(
        lines.map((l) => [l.level, l.msg, l.url, l.workers, l.mode]),
        [['info', `listening on ${url}, 2 workers`, url, 2, 'acceptor']],
      );
    });
  });

  test('stderrLogger() refuses a bad level or format', () => {
    assert.throws(() => stderrLogger({ level: 'verbose' as never }), /level must be error, warn, info or debug/);
    assert.throws(() => stderrLogger({ format: 'xml' as never }), /format must be 'pretty' or 'json'/);
  });
});
