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
function ask(port: number, topic: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: `/presence/${topic}`, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d) => (body += d));
        res.on('end', () => resolve(JSON.parse(body) as Answer));
      })
      .on('error', reject);
  });
}

interface Answer {
  worker: number;
  local: number;
  members: PresenceMember[];
}

test('cluster(): every worker lists the members of all workers; tabs on two workers are one member', async () => {
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
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
  }
});
