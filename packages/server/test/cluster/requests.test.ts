// app.cluster.request()/handle(): worker to worker over the real mesh of a real cluster (two
// worker threads), each failure a clear rejection, never a crash; and the same API in one
// process, handled locally.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { App, ClusterRequestError } from '../../src/index.ts';
import { fromEachWorker, get, startCluster, waitFor, type Cluster } from './harness.ts';

let cluster: Cluster;
before(async () => {
  cluster = await startCluster({ WORKERS: '2' });
});
after(async () => {
  assert.deepEqual(await cluster?.stop(), { code: null, signal: 'SIGTERM' });
});

const other = (worker: number) => (worker === 1 ? 2 : 1);

/** GET /ask on fresh connections until worker `asker` takes it. */
async function askFrom(asker: number, query: Record<string, string | number>): Promise<any> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
  for (let i = 0; i < 40; i++) {
    const { body } = await get(cluster.port, `/ask?${qs}`);
    if (body.asker === asker) return body;
  }
  throw new Error(`worker ${asker} never took /ask`);
}

test('a request reaches the other worker and its reply comes back, both ways', async () => {
  for (const asker of [1, 2]) {
    const body = await askFrom(asker, { to: 'other', channel: 'echo', data: JSON.stringify({ n: 1, list: ['a', 2] }) });
    assert.deepEqual(body.reply, { data: { n: 1, list: ['a', 2] }, from: asker, at: other(asker) });
  }
  // An async handler too.
  const slow = await askFrom(1, { to: 2, channel: 'slow', data: 50 });
  assert.deepEqual(slow.reply, { late: 2 });
});

test("a request to the worker's own id is handled there, with the same copies", async () => {
  const body = await askFrom(2, { to: 2, channel: 'echo', data: '"self"' });
  assert.deepEqual(body.reply, { data: 'self', from: 2, at: 2 });
});

test('bad cases reject with a clear code and message; the workers keep serving', async () => {
  const unknown = await askFrom(1, { to: 3, channel: 'echo' });
  assert.equal(unknown.error.name, 'ClusterRequestError');
  assert.equal(unknown.error.code, 'UNKNOWN_WORKER');
  assert.match(unknown.error.message, /no worker 3 \(worker ids are 1 to 2\)/);
  for (const to of [0, 1.5, -1]) assert.equal((await askFrom(1, { to, channel: 'echo' })).error.code, 'UNKNOWN_WORKER');

  const none = await askFrom(1, { to: 2, channel: 'nobody-listens' });
  assert.deepEqual(
    [none.error.code, none.error.message, none.error.worker, none.error.channel],
    ['NO_HANDLER', 'worker 2 has no handler for "nobody-listens"', 2, 'nobody-listens'],
  );

  const thrown = await askFrom(2, { to: 1, channel: 'fail' });
  assert.deepEqual([thrown.error.code, thrown.error.message], ['HANDLER_ERROR', 'handler broke']);

  const data = await askFrom(1, { to: 2, channel: 'echo', data: 'fn' });
  assert.equal(data.error.code, 'NOT_CLONEABLE');
  const reply = await askFrom(1, { to: 2, channel: 'bad-reply' });
  assert.equal(reply.error.code, 'NOT_CLONEABLE');
  assert.match(reply.error.message, /reply of worker 2 to "bad-reply" cannot be sent/);
  const localReply = await askFrom(1, { to: 1, channel: 'bad-reply' });
  assert.equal(localReply.error.code, 'NOT_CLONEABLE');

  const late = await askFrom(1, { to: 2, channel: 'never', timeout: 200 });
  assert.equal(late.error.code, 'TIMEOUT');
  assert.match(late.error.message, /worker 2 did not answer "never" within 200 ms/);
  assert.ok(late.ms >= 190 && late.ms < 1500, `timed out after ${late.ms} ms`);

  // Nothing above took a worker down.
  assert.equal((await fromEachWorker(cluster.port, '/who', 2)).size, 2);
  assert.ok(!cluster.lines.some((l) => /replacing it/.test(l?.msg ?? '')), 'no worker died');
});

test('the asked worker dies: its pending requests reject at once (not at the timeout), then while it restarts, then it answers again', async () => {
  const mark = cluster.lines.length;
  // Whichever worker takes this asks the other one, which dies (the asker must not be the victim).
  const { body } = await get(cluster.port, '/ask?to=other&channel=die&timeout=20000&again=1');
  const survivor: number = body.asker;
  const victim = other(survivor);
  assert.equal(body.error.code, 'WORKER_GONE');
  assert.match(body.error.message, new RegExp(`worker ${victim} stopped before answering "die"`));
  assert.ok(body.ms < 5000, `rejected after ${body.ms} ms`);
  // Asked again as soon as the first rejected: worker 2 is not back yet.
  assert.equal(body.again.error.code, 'WORKER_GONE');
  assert.match(body.again.error.message, new RegExp(`worker ${victim} is not running`));
  await waitFor(
    () => cluster.lines.slice(mark).some((l) => /uncaught exception: replacing it/.test(l?.msg ?? '') && l.worker === victim),
    8000,
    'the victim replaced',
  );
  await waitFor(
    async () => (await fromEachWorker(cluster.port, '/who', 2, 20).catch(() => new Map())).size === 2,
    8000,
    'both workers serving',
  );
  // The replacement has its handlers again; worker 1 never went down.
  await waitFor(
    async () => (await askFrom(survivor, { to: victim, channel: 'echo', data: '1' })).reply?.at === victim,
    8000,
    'the victim answering',
  );
  assert.ok(!cluster.lines.slice(mark).some((l) => /replacing it/.test(l?.msg ?? '') && l.worker === survivor), 'the asker kept running');
});

test('a worker serves no request it reads after its uncaught exception: the handler never runs, the asker gets WORKER_GONE', async () => {
  const mark = cluster.lines.length;
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'tachyon-dying-')), 'touched');
  const { body } = await get(cluster.port, `/ask-dying?file=${encodeURIComponent(file)}`);
  const victim = other(body.asker);
  assert.deepEqual(body.first, { reply: { busy: victim } });
  assert.equal(body.late.error?.code, 'WORKER_GONE', JSON.stringify(body.late));
  assert.match(body.late.error.message, new RegExp(`worker ${victim} stopped before answering "touch"`));
  await waitFor(
    () => cluster.lines.slice(mark).some((l) => /uncaught exception: replacing it/.test(l?.msg ?? '') && l.worker === victim),
    8000,
    'the victim replaced',
  );
  await waitFor(
    async () => (await askFrom(body.asker, { to: victim, channel: 'echo', data: '1' })).reply?.at === victim,
    8000,
    'the victim answering again',
  );
  assert.ok(!existsSync(file), 'the crashed worker ran a request it read after its crash');
});

test('outside a cluster: worker 0 is this process, handled locally with the same errors', async () => {
  const app = new App();
  assert.equal(app.cluster.worker, 0);
  app.cluster.handle('double', (n: number, from) => ({ twice: n * 2, from }));
  app.cluster.handle('fail', async () => {
    throw new Error('nope');
  });
  assert.deepEqual(await app.cluster.request(0, 'double', 21), { twice: 42, from: 0 });
  const reject = (p: Promise<unknown>, code: string, message: RegExp) =>
    assert.rejects(p, (err: unknown) => err instanceof ClusterRequestError && err.code === code && message.test(err.message));
  await reject(app.cluster.request(1, 'double', 1), 'UNKNOWN_WORKER', /no worker 1 \(worker ids are only 0 outside a cluster\)/);
  await reject(app.cluster.request(0, 'missing'), 'NO_HANDLER', /has no handler for "missing"/);
  await reject(app.cluster.request(0, 'fail'), 'HANDLER_ERROR', /^nope$/);
  await reject(
    app.cluster.request(0, 'double', () => 1),
    'NOT_CLONEABLE',
    /cannot be sent/,
  );
  app.cluster.handle('never', () => new Promise(() => {}));
  await reject(app.cluster.request(0, 'never', undefined, { timeout: 50 }), 'TIMEOUT', /within 50 ms/);
  // The data is a copy, as it would be between threads.
  const sent = { n: 1 };
  app.cluster.handle('mutate', (d: { n: number }) => ((d.n = 2), d));
  assert.deepEqual(await app.cluster.request(0, 'mutate', sent), { n: 2 });
  assert.equal(sent.n, 1);
  assert.throws(() => app.cluster.handle('double', () => 0), /channel "double" already has a handler/);
  assert.throws(() => app.cluster.handle('', () => 0), /non-empty string/);
  assert.throws(() => app.cluster.handle('x', 42 as never), /the handler must be a function/);
  await assert.rejects(app.cluster.request(0, ''), /the channel must be a non-empty string/);
  await assert.rejects(app.cluster.request(0, 'double', 1, { timeout: 0 }), /timeout must be a number of ms above 0/);
});
