// Presence across two server processes with Redis: a server killed with SIGKILL (no goodbye)
// has its members removed by the others within 4 heartbeats (docs/presence.md); a server that
// closes gracefully has them removed at once.
import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { connect, type Live, type PresenceChange } from '@tachyon/client';
import { RedisBroker } from '../buses/brokers.ts';

const CHILD = fileURLToPath(new URL('./child.ts', import.meta.url));
const HEARTBEAT = 150;
let redis: RedisBroker;
before(async () => {
  redis = await RedisBroker.start();
});
after(() => redis.stop());

async function server(heartbeat = HEARTBEAT): Promise<{ proc: ChildProcess; url: string }> {
  const proc = fork(CHILD, [redis.url, String(heartbeat)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    proc.once('message', (m: { port: number }) => resolve(m.port));
    proc.once('exit', (code) => reject(new Error(`child exited with ${code}`)));
  });
  return { proc, url: `ws://127.0.0.1:${port}/ws` };
}

const exited = (proc: ChildProcess) =>
  proc.exitCode !== null || proc.signalCode !== null ? Promise.resolve() : new Promise((r) => proc.once('exit', r));

async function member(url: string, user: string, topic: string): Promise<Live> {
  const live = connect(`${url}?user=${user}`, { onError: () => {}, maxRetries: 0 });
  live.subscribe(topic, () => {});
  await live.ping();
  return live;
}

async function until(check: () => Promise<boolean>, timeout: number, what: string): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeout) throw new Error(`${what}: not within ${timeout} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - start;
}

const ids = async (live: Live, topic: string) =>
  (await live.presence(topic))
    .map((m) => m.id)
    .sort()
    .join();

test('a crashed server (kill -9) has its members removed within 4 heartbeats, with $leave events', async () => {
  const a = await server();
  const b = await server();
  const clients: Live[] = [];
  try {
    const watcher = await member(b.url, 'watcher', 'room:crash');
    clients.push(watcher);
    const changes: string[] = [];
    watcher.onPresence('room:crash', (c: PresenceChange) => changes.push(`${c.type}:${c.member.id}`));
    clients.push(
      await member(a.url, 'ann', 'room:crash'),
      await member(a.url, 'ann', 'room:crash'),
      await member(a.url, 'al', 'room:crash'),
    );
    await until(async () => (await ids(watcher, 'room:crash')) === 'al,ann,watcher', 5000, 'members of both servers listed on b');
    await until(async () => changes.includes('join:ann') && changes.includes('join:al'), 2000, 'join events on b');
    a.proc.kill('SIGKILL');
    await exited(a.proc);
    const killedAt = Date.now();
    const took = await until(async () => (await ids(watcher, 'room:crash')) === 'watcher', 4 * HEARTBEAT + 1000, 'crashed members removed');
    assert.ok(took <= 4 * HEARTBEAT + 300, `removed after ${took} ms (heartbeat ${HEARTBEAT} ms)`);
    await until(async () => changes.includes('leave:ann') && changes.includes('leave:al'), 1000, 'leave events');
    assert.equal(changes.filter((c) => c === 'join:ann').length, 1, 'two tabs, one join');
    assert.ok(Date.now() - killedAt >= HEARTBEAT, 'removed by expiry: nothing was said when the process died');
  } finally {
    for (const c of clients) c.close();
    b.proc.send({ op: 'close' });
    await exited(b.proc);
  }
});

test('a server that closes gracefully says goodbye: its members go at once, before any expiry', async () => {
  // A long heartbeat: expiry would take 30 s, so removal within 2 s can only be the goodbye.
  const a = await server(10_000);
  const b = await server(10_000);
  const clients: Live[] = [];
  try {
    const watcher = await member(b.url, 'watcher', 'room:bye');
    clients.push(watcher, await member(a.url, 'bea', 'room:bye'));
    await until(async () => (await ids(watcher, 'room:bye')) === 'bea,watcher', 5000, 'bea listed on b');
    a.proc.send({ op: 'close' });
    await exited(a.proc);
    await until(async () => (await ids(watcher, 'room:bye')) === 'watcher', 2000, 'bea removed');
  } finally {
    for (const c of clients) c.close();
    b.proc.send({ op: 'close' });
    await exited(b.proc);
  }
});
