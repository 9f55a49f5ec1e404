// listen -> acceptor: an acceptor listening in the main thread hands accepted connections to
// Apps started without a listen socket in worker threads (uWS child app descriptors).
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { connect } from '../../../client/src/index.ts';
import { listenAcceptor, type Acceptor } from '../../src/app/acceptor.ts';

/** One request on a fresh connection, so the acceptor picks a child for each. */
function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ port, host: '127.0.0.1', path, agent: false }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d)).on('end', () => resolve({ status: res.statusCode!, body }));
      })
      .on('error', reject);
  });
}

interface Child {
  worker: Worker;
  descriptor: number;
}

async function startChild(): Promise<Child> {
  const worker = new Worker(new URL('./acceptor-child.ts', import.meta.url));
  const message = await new Promise<{ descriptor: number }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`worker exited (${code}) before starting its app`)));
  });
  return { worker, descriptor: message.descriptor };
}

async function closeChild(acceptor: Acceptor, child: Child): Promise<void> {
  acceptor.remove(child.descriptor);
  const closed = new Promise((resolve) => child.worker.once('message', resolve));
  child.worker.postMessage('close');
  // Bounded: a child that never answers is terminated anyway.
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 3000).unref())]);
  await child.worker.terminate();
}

let acceptor: Acceptor;
let children: Child[] = [];
before(async () => {
  acceptor = await listenAcceptor(0, '127.0.0.1');
  children = await Promise.all([startChild(), startChild()]);
  for (const c of children) acceptor.add(c.descriptor);
});
after(async () => {
  for (const c of children) await closeChild(acceptor, c);
  acceptor.close();
});

test('requests reach the apps in the worker threads, spread over them', async () => {
  const threads = new Set<number>();
  for (let i = 0; i < 6; i++) {
    const res = await get(acceptor.port, '/who');
    assert.equal(res.status, 200);
    threads.add(JSON.parse(res.body).thread);
  }
  assert.deepEqual([...threads].sort(), children.map((c) => c.worker.threadId).sort());
  assert.equal((await get(acceptor.port, '/missing')).status, 404, 'the child answers misses too');
});

test('WebSockets upgrade through the acceptor and talk to a worker', async () => {
  const client = connect(`ws://127.0.0.1:${acceptor.port}/live`);
  try {
    const thread = await client.request('who');
    assert.ok(children.some((c) => c.worker.threadId === thread));
  } finally {
    client.close();
  }
});

test('an acceptor refuses a bad port and a descriptor added twice', async () => {
  await assert.rejects(listenAcceptor(70000), /Invalid port/);
  assert.throws(() => acceptor.add(children[0]!.descriptor), /new app descriptor/);
});
