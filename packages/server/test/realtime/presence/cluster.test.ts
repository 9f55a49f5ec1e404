// Presence across the worker threads of one cluster() (the thread bus): members of every
// worker are listed by each, and a user with tabs on two workers is one member.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { connect, type Live, type PresenceMember } from '../../../../client/src/index.ts';
import { eventually } from './suite.ts';

const SERVER = fileURLToPath(new URL('./cluster-server.ts', import.meta.url));

/** One request on a new connection (connections are spread round-robin over the workers). */
function get<T>(port: number, path: string): Promise<T> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d) => (body += d));
        res.on('end', () => resolve(JSON.parse(body) as T));
      })
      .on('error', reject);
  });
}

const ask = (port: number, topic: string) => get<Answer>(port, `/presence/${topic}`);

interface Answer {
  worker: number;
  local: number;
  members: PresenceMember[];
}

async function startServer() {
  const proc = spawn(process.execPath, [SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /"ready":(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    proc.once('exit', (code) => reject(new Error(`cluster exited with ${code}`)));
  });
  const stop = async () => {
    proc.kill('SIGTERM');
    if (proc.exitCode === null && proc.signalCode === null) await new Promise((r) => proc.once('exit', r));
  };
  return { port, stop };
}

test('cluster(): every worker lists the members of all workers; tabs on two workers are one member', async () => {
  const { port, stop } = await startServer();
  const clients: Live[] = [];
  try {
    // Round-robin over two workers: consecutive connections land on different workers.
    for (const user of ['ann', 'ann', 'bob', 'cy', 'dee', 'eli']) {
      const live = connect(`ws://127.0.0.1:${port}/ws?user=${user}`, { onError: () => {} });
      live.subscribe('room:c', () => {});
      await live.ping();
      clients.push(live);
    }
    const seen = new Map<number, Answer>();
    await eventually(
      async () => {
        const a = await ask(port, 'room:c');
        if (a.members.length === 5) seen.set(a.worker, a);
        return seen;
      },
      (s) => s.size === 2,
      10_000,
      'both workers list all five members',
    );
    for (const a of seen.values()) {
      assert.ok(a.local > 0 && a.local < 6, `worker ${a.worker} has some of the sockets itself (${a.local})`);
      assert.deepEqual(a.members.map((m) => m.id).sort(), ['ann', 'bob', 'cy', 'dee', 'eli']);
    }
    clients[0]!.close(); // one of ann's tabs
    for (const c of clients.slice(2)) c.close();
    await eventually(
      async () => (await ask(port, 'room:c')).members.map((m) => m.id).join(),
      (ids) => ids === 'ann',
      10_000,
      'only ann (her other tab) is left',
    );
  } finally {
    for (const c of clients) c.close();
    await stop();
  }
});

test('cluster(): a worker that crashes has its members removed by the others within 4 heartbeats', async () => {
  const { port, stop } = await startServer();
  const clients: { live: Live; user: string; worker: number }[] = [];
  try {
    for (const user of ['u1', 'u2', 'u3', 'u4']) {
      // No reconnect: a socket of the dead worker must not come back as a member elsewhere.
      const live = connect(`ws://127.0.0.1:${port}/ws?user=${user}`, { onError: () => {}, maxRetries: 0 });
      live.subscribe('room:k', () => {});
      clients.push({ live, user, worker: (await live.request('where')) as number });
    }
    const workers = new Set(clients.map((c) => c.worker));
    assert.equal(workers.size, 2, 'connections spread over both workers');
    const victim = clients[0]!.worker;
    const survivor = clients.find((c) => c.worker !== victim)!;
    await eventually(
      () => survivor.live.presence('room:k'),
      (m) => m.length === 4,
      5000,
      'all four listed',
    );
    // Round-robin: ask until the victim answers (and dies).
    let crashedAt = 0;
    for (let i = 0; i < 10 && crashedAt === 0; i++) {
      if ((await get<{ crashing: number }>(port, '/crash')).crashing === victim) crashedAt = Date.now();
    }
    assert.ok(crashedAt > 0, 'the victim worker was reached');
    const left = clients
      .filter((c) => c.worker !== victim)
      .map((c) => c.user)
      .sort()
      .join();
    await eventually(
      () => survivor.live.presence('room:k'),
      (m) =>
        m
          .map((x) => x.id)
          .sort()
          .join() === left,
      4 * 200 + 2000,
      "the dead worker's members removed",
    );
    const took = Date.now() - crashedAt;
    assert.ok(took <= 4 * 200 + 500, `removed ${took} ms after the crash (heartbeat 200 ms)`);
  } finally {
    for (const c of clients) c.live.close();
    await stop();
  }
});
