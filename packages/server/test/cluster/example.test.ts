// examples/hello on worker threads: `WORKERS=2 npm start` as a user runs it (here with node
// directly, PORT=0), against the built package.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { test } from 'node:test';

const example = new URL('../../../../examples/hello/', import.meta.url).pathname;

function get(port: number, path: string): Promise<{ status: number; servedBy: string; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ port, host: '127.0.0.1', path, agent: false }, (res) => {
        let body = '';
        res
          .on('data', (d) => (body += d))
          .on('end', () => resolve({ status: res.statusCode!, servedBy: String(res.headers['x-served-by']), body }));
      })
      .on('error', reject);
  });
}

test('examples/hello runs on 2 worker threads with WORKERS=2 and stops on SIGTERM', async () => {
  const proc = spawn(process.execPath, ['server.ts'], {
    cwd: example,
    env: { ...process.env, WORKERS: '2', PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    proc.once('exit', (code, signal) => r({ code, signal })),
  );
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start:\n${output}`)), 20_000);
      const onData = (d: Buffer) => {
        output += d;
        const m = /on http:\/\/localhost:(\d+) \(2 worker threads\)/.exec(output);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      };
      proc.stdout!.on('data', onData);
      proc.stderr!.on('data', onData);
      void exited.then(() => reject(new Error(`exited:\n${output}`)));
    });
    const servedBy = new Set<string>();
    for (let i = 0; i < 8; i++) {
      const res = await get(port, '/api/hello?name=cluster');
      assert.equal(res.status, 200);
      assert.deepEqual(JSON.parse(res.body), { message: 'Hello, cluster!' });
      servedBy.add(res.servedBy);
    }
    assert.deepEqual([...servedBy].sort(), ['tachyon worker 1', 'tachyon worker 2']);
  } finally {
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
    assert.deepEqual(await exited, { code: null, signal: 'SIGTERM' }, output);
    clearTimeout(timer);
  }
});
