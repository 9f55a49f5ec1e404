// `WORKERS=2 node build`: the built Kit 3 app on Tachyon's cluster(). A form action served by
// one worker publishes to pages (WebSockets) held by both; files and SSR answer from either
// worker; a worker that dies is replaced; SIGTERM drains every worker (in-flight requests
// finish, sockets get 1001, sveltekit:shutdown in each worker) and the process exits 0.
// platform.send / sendTo reach the sockets of both workers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type Live } from '@tachyon/client';
import { buildFixture, startServer, type Running } from './helpers/fixture.ts';
import { raw } from './helpers/suite.ts';

type Client = { live: Live; thread: number };

/**
 * Opens clients until sockets sit on `threads` different worker threads (the acceptor hands
 * connections round-robin, but other connections may interleave: bounded, not assumed); returns
 * them with their thread. `query` goes on the WebSocket URL (`id=u1`: the socket's user id).
 */
async function spread(url: string, threads: number, query = ''): Promise<Client[]> {
  const out: Client[] = [];
  for (let i = 0; i < 32 && new Set(out.map((c) => c.thread)).size < threads; i++) {
    const live = connect(url.replace('http', 'ws') + '/ws' + (query ? `?${query}` : ''), { maxRetries: 0 });
    try {
      await live.ready;
      out.push({ live, thread: (await live.request('thread')) as number });
    } catch (err) {
      live.close();
      for (const c of out) c.live.close();
      throw err;
    }
  }
  return out;
}

/** The thread ids of `clients`, asserted to be `threads` different ones. */
function threadsOf(clients: Client[], threads: number): Set<number> {
  const set = new Set(clients.map((c) => c.thread));
  assert.equal(set.size, threads, `sockets on ${threads} workers (threads ${[...set]})`);
  return set;
}

/**
 * Waits until every worker counts `n` subscribers of `topic` over the cluster: interest travels
 * between workers once per event-loop turn, and a publish reaches only the workers known to
 * have subscribers (docs/cluster.md). Asks over new connections until each of `threads` answered so.
 */
async function waitForInterest(url: string, topic: string, n: number, threads: Set<number>): Promise<void> {
  const agreed = new Set<number>();
  const seen: unknown[] = [];
  for (const deadline = Date.now() + 20_000; Date.now() < deadline && agreed.size < threads.size; ) {
    const res = await raw(url, { path: `/api/platform?op=subscribers&topic=${topic}` });
    const body = JSON.parse(res.body.toString()) as { thread: number; cluster: number };
    seen.push(body);
    if (body.cluster === n) agreed.add(body.thread);
    else await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(agreed.size, threads.size, `every worker counts ${n} subscribers of ${topic}: ${JSON.stringify(seen.slice(-4))}`);
}

/** Polls `check` every 20 ms until it holds or `ms` passed. */
async function until(check: () => boolean, ms = 10_000): Promise<void> {
  for (const deadline = Date.now() + ms; !check() && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
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
      const threads = threadsOf(clients, 2);
      const got = clients.map(() => [] as string[]);
      for (const [i, c] of clients.entries()) c.live.subscribe('news', (_event, data) => got[i]!.push((data as { text: string }).text));
      await Promise.all(clients.map((c) => c.live.ping())); // subscribed here
      await waitForInterest(server.url, 'news', clients.length, threads); // and known to the other worker
      // POSTs until actions ran in both workers (each a new connection; at least 4, at most 16).
      const actionThreads = new Set<number>();
      const want: string[] = [];
      const byThread = new Map<number, string[]>(); // order is per publisher (docs/cluster.md)
      for (let n = 0; n < 16 && (n < 4 || actionThreads.size < 2); n++) {
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
        actionThreads.add(data.thread as number);
        want.push(`note ${n}`);
        byThread.set(data.thread as number, [...(byThread.get(data.thread as number) ?? []), `note ${n}`]);
      }
      assert.deepEqual([...actionThreads].sort(), [...threads].sort(), 'actions ran in both workers');
      await until(() => got.every((g) => g.length >= want.length));
      for (const [i, g] of got.entries()) {
        const where = `client ${i} on thread ${clients[i]!.thread}: ${g}`;
        assert.deepEqual([...g].sort(), [...want].sort(), `every note once, ${where}`);
        for (const notes of byThread.values())
          assert.deepEqual(
            g.filter((t) => notes.includes(t)),
            notes,
            `in order per worker, ${where}`,
          );
      }
    } finally {
      for (const c of clients) c.live.close();
    }
  });

  it('platform.send(userId) and sendTo(filter) reach the sockets of both workers', async () => {
    const clients = await spread(server.url, 2, 'id=u1'); // one user's tabs, on both workers
    try {
      threadsOf(clients, 2);
      const dms = clients.map(() => [] as unknown[]);
      const notes = clients.map(() => [] as unknown[]);
      for (const [i, c] of clients.entries()) {
        c.live.onEvent('dm', (data) => dms[i]!.push(data));
        c.live.onEvent('note', (data) => notes[i]!.push(data));
      }
      const api = async (query: string) => JSON.parse((await raw(server.url, { path: `/api/platform?${query}` })).body.toString());
      const sent = (await api('op=send&id=u1')) as { n: number; connections: number };
      // The count is the serving worker's: some of the tabs, not all (the others are on the other worker).
      assert.ok(sent.n >= 1 && sent.n < clients.length, JSON.stringify(sent));
      assert.deepEqual(await api('op=send&id=nobody'), { n: 0, connections: sent.connections });
      const filtered = (await api('op=sendTo&id=u')) as { n: number };
      assert.ok(filtered.n >= 1 && filtered.n < clients.length, JSON.stringify(filtered));
      await until(() => dms.every((d) => d.length >= 1) && notes.every((n) => n.length >= 1));
      for (const [i, c] of clients.entries()) {
        assert.deepEqual(dms[i], [{ to: 'u1' }], `send: client ${i} on thread ${c.thread}, once`);
        assert.deepEqual(notes[i], [{ prefix: 'u' }], `sendTo: client ${i} on thread ${c.thread}, once`);
      }
      // A filter that picks no one sends nothing anywhere.
      assert.deepEqual(await api('op=sendTo&id=zz'), { n: 0 });
      await Promise.all(clients.map((c) => c.live.ping()));
      assert.ok(notes.every((n) => n.length === 1));
    } finally {
      for (const c of clients) c.live.close();
    }
  });

  it('a worker that dies is replaced: the app keeps answering on two workers', async () => {
    const before = await spread(server.url, 2);
    const threads = threadsOf(before, 2);
    for (const c of before) c.live.close();
    const res = await raw(server.url, { path: '/api/platform?op=exit' });
    assert.equal(res.status, 200, res.body.toString());
    const dead = (JSON.parse(res.body.toString()) as { exiting: number }).exiting;
    assert.ok(threads.has(dead));
    // The replacement is a new thread. Until it serves, the other worker answers; a connection
    // handed to the dying worker just before it left may fail: that is retried, within the bound.
    const seen: string[] = [];
    let now = new Set<number>();
    for (const deadline = Date.now() + 60_000; Date.now() < deadline && !(now.size === 2 && !now.has(dead)); ) {
      try {
        seen.push(`GET / ${(await raw(server.url, { path: '/' })).status}`);
        const after = await spread(server.url, 2);
        for (const c of after) c.live.close();
        now = new Set(after.map((c) => c.thread));
        seen.push(`threads ${[...now]}`);
      } catch (err) {
        seen.push(String(err));
      }
      if (!(now.size === 2 && !now.has(dead))) await new Promise((r) => setTimeout(r, 200));
    }
    const died = server.child.exitCode ?? server.child.signalCode; // the whole process, not the worker
    assert.equal(now.size, 2, `two workers again: ${seen.slice(-6).join('; ')}; process ended: ${died}\n${server.output().slice(-3000)}`);
    assert.ok(!now.has(dead), 'the dead worker was replaced');
    // Once replaced, every page answers again.
    for (let i = 0; i < 4; i++) assert.equal((await raw(server.url, { path: '/' })).status, 200);
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
