// The hello example as a user runs it: `node server.ts` in a child process on a free port,
// a few of its routes over real HTTP, then SIGTERM.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';

let child: ChildProcess;
let base = '';

before(async () => {
  child = spawn(process.execPath, ['server.ts'], {
    cwd: new URL('..', import.meta.url),
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // The example prints its address once it listens; the JSON access log shares stdout.
  let out = '';
  base = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server.ts exited (${code}) before listening:\n${out}`)));
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const m = /on (http:\/\/localhost:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
  });
});

after(async () => {
  if (child.exitCode === null) {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
});

test('the page, a validated query and a path parameter', async () => {
  const page = await fetch(base + '/');
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /text\/html/);
  assert.equal(page.headers.get('x-served-by'), 'tachyon'); // workers: 1 runs in this thread
  assert.deepEqual(await (await fetch(base + '/api/hello?name=Ada')).json(), { message: 'Hello, Ada!' });
  assert.deepEqual(await (await fetch(base + '/api/users/1')).json(), { id: 1, name: 'Ada' });
});

test('bad input is a clear 4xx, never a crash', async () => {
  assert.equal((await fetch(base + '/api/users/abc')).status, 400);
  assert.equal((await fetch(base + '/api/users/99')).status, 404);
  const bad = await fetch(base + '/api/users', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":""}' });
  assert.equal(bad.status, 400);
  assert.equal((await fetch(base + '/api/hello')).status, 200, 'still serving after the bad requests');
});

test('SIGTERM stops it: cluster() closes, then re-raises the signal (docs/cluster.md)', async () => {
  child.kill('SIGTERM');
  const [code, signal] = await once(child, 'exit');
  assert.deepEqual([code, signal], [null, 'SIGTERM']);
});
