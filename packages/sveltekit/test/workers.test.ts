// `WORKERS=2 node build`: the built Kit 3 app on Tachyon's cluster(). A form action served by
// one worker publishes to pages (WebSockets) held by both; files and SSR answer from either
// worker; a worker that dies is replaced; SIGTERM drains every worker (in-flight requests
// finish, sockets get 1001, sveltekit:shutdown in each worker) and the process exits 0.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type Live } from '@tachyon/client';
import { buildFixture, startServer, type Running } from './helpers/fixture.ts';
import { raw } from './helpers/suite.ts';

/** Opens clients until sockets sit on `threads` different worker threads; returns them with their thread. */
async function spread(url: string, threads: number): Promise<{ live: Live; thread: number }[]> {
  const out: { live: Live; thread: number }[] = [];
  for (let i = 0; i < 16 && new Set(out.map((c) => c.thread)).size < threads; i++) {
    const live = connect(url.replace('http', 'ws') + '/ws', { maxRetries: 0 });
    await live.ready;
    out.push({ live, thread: (await live.request('thread')) as number });
  }
  return out;
}

/** A form action's result data: SvelteKit serializes it with devalue (values by index). */
function actionData(body: string): Record<string, unknown> {
  const result = JSON.parse(body) as { type: string; data: string };
  assert.equal(result.type, 'success', body);
  const flat = JSON.parse(result.data) as unknown[];
  const keys = flat[0] as Record<string, number>;
  return Object.fromEntries(Object.entries(keys).map(([k, i]) => [k, flat[i]]));
}

describe('WORKERS=2: the built app on cluster()', { timeout: 300_000 }, () => {
  let dir: string;
  let server: Running;

  before(async () => {
    dir = buildFixture('kit3');
    server = await startServer(dir, { WORKERS: '2', SHUTDOWN_TIMEOUT: '5' });
  });
  after(async () => {
    await server?.stop();
  });

  it('says so when it listens; pages and files answer from both workers', async () => {
    assert.match(server.output(), /Listening on http:\/\/127\.0\.0\.1:\d+ \(2 workers\)/);
    for (let i = 0; i < 6; i++) {
      const page = await raw(server.url, { path: '/' }); // a new connection each time
      assert.equal(page.status, 200);
      assert.match(page.body.toString(), /hello from ssr/);
      const css = await raw(server.url, { path: '/asset.css' });
      assert.equal(css.status, 200);
    }
  });

  it('a form action in one worker publishes to pages held by both', async () => {
    const clients = await spread(server.url, 2);
    try {
      const threads = new Set(clients.map((c) => c.thread));
      assert.equal(threads.size, 2, `sockets on two workers (threads ${[...threads]})`);
      const got = clients.map(() => [] as string[]);
      for (const [i, c] of clients.entries()) c.live.subscribe('news', (_event, data) => got[i]!.push((data as { text: string }).text));
      await Promise.all(clients.map((c) => c.live.ping())); // subscribed
      const actionThreads = new Set<unknown>();
      for (let n = 0; n < 4; n++) {
        const res = await raw(server.url, {
          method: 'POST',
          path: '/live?/publish',
          body: new URLSearchParams({ text: `note ${n}` }).toString(),
          headers: {
            origin: server.url,
            accept: 'application/json',
            'x-sveltekit-action': 'true',
            'content-type': 'application/x-www-form-urlencoded',
          },
        });
        assert.equal(res.status, 200, res.body.toString());
        const data = actionData(res.body.toString());
        assert.equal(data.delivered, true);
        actionThreads.add(data.thread);
      }
      assert.ok(
        [...actionThreads].every((t) => threads.has(t as number)),
        'actions ran in the workers',
      );
      const want = ['note 0', 'note 1', 'note 2', 'note 3'];
      for (let i = 0; i < 100 && got.some((g) => g.length < want.length); i++) await new Promise((r) => setTimeout(r, 20));
      for (const [i, g] of got.entries()) assert.deepEqual(g, want, `client ${i} on thread ${clients[i]!.thread}`);
    } finally {
      for (const c of clients) c.live.close();
    }
  });

  it('a worker that dies is replaced: the app keeps answering on two workers', async () => {
    const before = await spread(server.url, 2);
    const threads = new Set(before.map((c) => c.thread));
    for (const c of before) c.live.close();
    const res = await raw(server.url, { path: '/api/platform?op=exit' });
    assert.equal(res.status, 200, res.body.toString());
    const dead = (JSON.parse(res.body.toString()) as { exiting: number }).exiting;
    assert.ok(threads.has(dead));
    // The replacement is a new thread; until it serves, the other worker answers.
    let after: { live: Live; thread: number }[] = [];
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      assert.equal((await raw(server.url, { path: '/' })).status, 200);
      after = await spread(server.url, 2);
      for (const c of after) c.live.close();
      const now = new Set(after.map((c) => c.thread));
      if (now.size === 2 && !now.has(dead)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const now = new Set(after.map((c) => c.thread));
    assert.equal(now.size, 2, 'two workers again');
    assert.ok(!now.has(dead), 'the dead worker was replaced');
  });

  it('SIGTERM: in-flight requests finish in every worker, sockets get 1001, sveltekit:shutdown in each worker, exit 0', async () => {
    const own = await startServer(dir, { WORKERS: '2', SHUTDOWN_TIMEOUT: '5' });
    const clients = await spread(own.url, 2); // sockets on both workers
    const codes = clients.map(
      (c) =>
        new Promise<number>((resolve) => {
          c.live.onStatus((status, info) => status !== 'open' && info.code !== undefined && resolve(info.code));
        }),
    );
    const slow = [raw(own.url, { path: '/slow?ms=700' }), raw(own.url, { path: '/slow?ms=700' })];
    await new Promise((r) => setTimeout(r, 250));
    const signalled = Date.now();
    own.child.kill('SIGTERM');
    for (const res of await Promise.all(slow)) {
      assert.equal(res.status, 200);
      assert.equal(res.body.toString(), 'slept 700');
    }
    assert.deepEqual(
      await Promise.all(codes),
      clients.map(() => 1001),
    );
    assert.equal(await own.exited, 0);
    assert.ok(Date.now() - signalled < 4500, 'exited before SHUTDOWN_TIMEOUT');
    assert.equal(own.output().match(/sveltekit:shutdown SHUTDOWN/g)?.length, 2, own.output());
    for (const c of clients) c.live.close();
  });
});
