// Under cluster(): whichever worker the page's WebSocket lands on, it shows every worker (CPU,
// memory, event-loop delay each), sums their connections and requests, and disconnects a
// socket on any worker. The cluster runs in its own process (cluster-server.ts).
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import type { DashboardView } from '../src/index.ts';
import { client, startClusterProcess, stats, upgradeStatus } from './helpers.ts';

const AUTH = { authorization: 'Bearer s3cret' };
let proc: ChildProcess;
let port = 0;

before(async () => {
  ({ proc, port } = await startClusterProcess());
});
after(() => {
  proc?.kill('SIGTERM');
});

test('the page shows both workers and their sums, and disconnects sockets on either worker', { timeout: 60_000 }, async () => {
  assert.equal(await upgradeStatus(port, '/_tachyon/ws'), 403, 'a stranger is refused on every worker');
  const users = [];
  for (let i = 0; i < 6; i++) users.push(await client(`ws://127.0.0.1:${port}/live?user=u${i}`));
  const page = await client(`ws://127.0.0.1:${port}/_tachyon/ws`, AUTH);
  for (let i = 0; i < 30; i++) await (await fetch(`http://127.0.0.1:${port}/hello`)).text();
  const view: DashboardView = (
    await page.next((m) => stats(m) && m.data.workerStats.length === 2 && m.data.routes.length > 0 && m.data.connections === 7, 20_000)
  ).data;
  assert.equal(view.workers, 2);
  assert.deepEqual(view.missing, []);
  assert.deepEqual(
    view.workerStats.map((w) => w.worker),
    [1, 2],
  );
  for (const w of view.workerStats) {
    assert.ok(w.heapUsed > 0 && w.rss > 0, JSON.stringify(w));
    assert.ok(w.cpu >= 0 && Number.isFinite(w.cpu));
    assert.ok(w.eld.p99 >= 0);
  }
  assert.equal(view.sockets.length, 7);
  // Disconnect every user socket from the one page, wherever it lives.
  const targets = view.sockets.filter((x) => !x.dashboard);
  assert.equal(targets.length, 6);
  let ref = 0;
  const seen = new Set<number>();
  for (const t of targets) {
    seen.add(t.worker);
    page.ws.send(JSON.stringify({ type: 'event', event: 'disconnect', data: { worker: t.worker, id: t.id }, ref: ++ref }));
    const answer = await page.next((m) => (m.type === 'reply' || m.type === 'error') && m.ref === ref);
    assert.equal(answer.type, 'reply', JSON.stringify(answer));
  }
  const codes = await Promise.all(users.map((u) => u.closed.then((c) => c.code)));
  assert.ok(
    codes.every((c) => c === 1008),
    codes.join(', '),
  );
  assert.equal(seen.size, 2, 'the sockets were spread over both workers, so a disconnect crossed workers');
});
