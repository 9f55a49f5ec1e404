// Nothing outlives its request: after an asynchronous answer, the Response (and the body it
// sent) can be collected without another request coming along. Runs in a child process with
// --expose-gc so the collection is forced and observed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const index = fileURLToPath(new URL('../../src/index.ts', import.meta.url));

const SCRIPT = `
import { App } from ${JSON.stringify(index)};
const refs = [];
const app = new App();
app.get('/big', async (req, res) => {
  await new Promise((r) => setTimeout(r, 5));
  const body = Buffer.alloc(900 * 1024, 97);
  refs.push(new WeakRef(res), new WeakRef(req), new WeakRef(body), new WeakRef(req.headers));
  res.send(body);
});
const server = await app.listen({ port: 0, host: '127.0.0.1' });
const r = await fetch('http://127.0.0.1:' + server.port + '/big');
const size = (await r.arrayBuffer()).byteLength;
for (let i = 0; i < 10 && refs.some((w) => w.deref() !== undefined); i++) {
  await new Promise((r) => setTimeout(r, 20));
  globalThis.gc();
}
console.log(JSON.stringify({ size, alive: refs.map((w) => w.deref() !== undefined) }));
await server.close({ timeout: 100 });
`;

test("an async response, its 900 KiB body and the request's headers are collectable right after the request", () => {
  const out = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', SCRIPT], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(out.status, 0, out.stderr);
  const { size, alive } = JSON.parse(out.stdout.trim().split('\n').pop()!);
  assert.equal(size, 900 * 1024);
  assert.deepEqual(alive, [false, false, false, false], 'response, request, body and header record all collected');
});
