// Presence in one process (the in-process bus): the shared behaviour suite, then what only a
// single app shows: refused readers, bad frames, options, hooks that throw, and memory under
// join/leave churn.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { App, type Logger } from '../../../src/index.ts';
import { ClientError } from '../../../../client/src/index.ts';
import { client, eventually, ids, join, presenceSuite, setupPresenceApp, sleep } from './suite.ts';

async function startOne(options: ConstructorParameters<typeof App>[0] = {}, setup = setupPresenceApp) {
  const app = new App(options);
  setup(app);
  const server = await app.listen({ port: 0, host: '127.0.0.1' });
  const node = { app, url: `ws://127.0.0.1:${server.port}/ws` };
  return { app, node, server, close: () => server.close({ timeout: 2000 }) };
}

presenceSuite('memory (one process)', async () => {
  const one = await startOne();
  return { nodes: [one.node, one.node], close: one.close };
});

/** A raw WebSocket: every text frame it receives, and a way to wait for one. */
async function rawSocket(url: string) {
  const ws = new WebSocket(url);
  const frames: string[] = [];
  ws.addEventListener('message', (e) => frames.push(String(e.data)));
  await new Promise((r, j) => (ws.addEventListener('open', r), ws.addEventListener('error', j)));
  const next = async (match: (f: string) => boolean) =>
    eventually(
      () => frames.find(match),
      (f) => f !== undefined,
      3000,
      'frame',
    );
  return { ws, frames, next };
}

test('a socket the subscribe hook refuses cannot read presence (DENIED), nor read a topic without presence (NO_PRESENCE)', async () => {
  const one = await startOne();
  const ann = await client(one.node, 'ann');
  try {
    await join(ann, 'room:secret:1'); // denied by the hook: not a member either
    assert.deepEqual(await one.app.presence('room:secret:1'), []);
    const denied = await ann.presence('room:secret:1').catch((e: unknown) => e);
    assert.ok(denied instanceof ClientError);
    assert.equal(denied.code, 'DENIED');
    const none = await ann.presence('plain').catch((e: unknown) => e);
    assert.ok(none instanceof ClientError);
    assert.equal(none.code, 'NO_PRESENCE');
    await assert.rejects(one.app.presence('plain'), /has no presence/);
  } finally {
    ann.close();
    await one.close();
  }
});

test('an async subscribe hook decides presence reads too; a throwing one answers DENIED and is logged', async () => {
  const errors: unknown[] = [];
  const logger: Logger = { error: (o: unknown) => errors.push(o), warn() {}, info() {}, debug() {} } as unknown as Logger;
  const one = await startOne({ logger }, (app) => {
    app.topic('room:*', { presence: true });
    app.ws('/ws', {
      upgrade: (req) => ({ id: req.query.user }),
      subscribe: async (_ws, topic) => {
        await sleep(5);
        if (topic === 'room:boom') throw new Error('boom');
        return topic !== 'room:no';
      },
    });
  });
  const ann = await client(one.node, 'ann');
  try {
    await join(ann, 'room:yes');
    await eventually(
      () => ann.presence('room:yes'),
      (m) => ids(m).join() === 'ann',
      3000,
      'async allowed',
    );
    assert.equal(((await ann.presence('room:no').catch((e) => e)) as ClientError).code, 'DENIED');
    assert.equal(((await ann.presence('room:boom').catch((e) => e)) as ClientError).code, 'DENIED');
    assert.ok(errors.length >= 1, 'the failing hook was logged');
  } finally {
    ann.close();
    await one.close();
  }
});

test('bad presence frames get a clear error reply and the socket keeps working', async () => {
  const one = await startOne();
  const raw = await rawSocket(`${one.node.url}?user=zed`);
  try {
    const cases: [string, RegExp][] = [
      ['{"type":"presence","topic":"room:1"}', /"code":"BAD_FRAME".*needs a ref/],
      ['{"type":"presence","ref":1}', /"ref":1,"code":"BAD_FRAME".*valid topic/],
      ['{"type":"presence","topic":42,"ref":2}', /"ref":2,"code":"BAD_FRAME"/],
      ['{"type":"presence","topic":"bad topic\\"","ref":3}', /"ref":3,"code":"BAD_FRAME"/],
      ['{"type":"presence","topic":"' + 'x'.repeat(300) + '","ref":4}', /"ref":4,"code":"BAD_FRAME"/],
      ['{"type":"presence","topic":"__presence","ref":5}', /"ref":5,"code":"NO_PRESENCE"/],
      ['{"type":"presence","topic":["room:1"],"ref":6}', /"ref":6,"code":"BAD_FRAME"/],
      ['{"type":"presence","topic":"room:1","ref":-1}', /"code":"BAD_FRAME".*needs a ref/],
    ];
    for (const [frame, expected] of cases) {
      const before = raw.frames.length;
      raw.ws.send(frame);
      const got = await eventually(
        () => raw.frames.slice(before),
        (f) => f.length > 0,
        3000,
        `answer to ${frame}`,
      );
      assert.match(got[0]!, expected, frame);
    }
    raw.ws.send('{"type":"subscribe","topic":"room:1","ref":10}');
    raw.ws.send('{"type":"presence","topic":"room:1","ref":11}');
    assert.equal(await raw.next((f) => f.includes('"ref":11')), '{"type":"reply","ref":11,"data":[{"id":"zed","data":{"name":"zed!"}}]}');
  } finally {
    raw.ws.close();
    await one.close();
  }
});

test('presence options are checked when declared; id and data hooks that throw leave the socket uncounted, not crashed', async () => {
  const app = new App();
  assert.throws(() => app.topic('a:*', { presence: { id: 'userId' as never } }), /presence.id must be a function/);
  assert.throws(() => app.topic('b:*', { presence: { events: 'yes' as never } }), /presence.events must be a boolean/);
  assert.throws(
    () => app.topic('c:*', { presence: { who: 1 } as never }),
    /topic c:\*: presence: unknown option "who" \(known: id, data, events\)/,
  );
  assert.throws(() => new App({ presence: { heartbeat: 10 } }), /heartbeat must be an integer from 50/);
  const errors: unknown[] = [];
  const logger = { error: (o: unknown) => errors.push(o), warn() {}, info() {}, debug() {} } as unknown as Logger;
  const one = await startOne({ logger }, (a) => {
    a.topic('t:*', {
      presence: {
        id: (ws) => (ws.data as { user: string }).user,
        data: (ws) => ((ws.data as { user: string }).user === 'bad' ? { n: 1n } : { ok: true }),
      },
    });
    a.topic('boom:*', {
      presence: {
        id: () => {
          throw new Error('no id');
        },
      },
    });
    a.ws('/ws', { upgrade: (req) => ({ user: String(req.query.user) }) });
  });
  const good = await client(one.node, 'good');
  const bad = await client(one.node, 'bad');
  try {
    await join(good, 't:1');
    await join(bad, 't:1');
    await join(good, 'boom:1');
    assert.deepEqual(await one.app.presence('t:1'), [{ id: 'good', data: { ok: true } }, { id: 'bad' }]);
    assert.deepEqual(await one.app.presence('boom:1'), []);
    assert.equal(errors.length, 2, 'both failing hooks logged');
    assert.ok((await good.ping()) >= 0, 'still serving');
  } finally {
    good.close();
    bad.close();
    await one.close();
  }
});

// gc() without --expose-gc on the command line (npm test runs plain `node --test`).
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

test('join/leave churn leaves no member, id or socket behind (checked after gc)', async () => {
  const one = await startOne();
  const tracker = (one.app as unknown as { hub: { presence: { stats(): { topics: number; members: number; sockets: number } } } }).hub
    .presence;
  const watcher = await client(one.node, 'watcher');
  try {
    const churn = async (round: number) => {
      const clients = await Promise.all(Array.from({ length: 20 }, (_, i) => client(one.node, `u${round}-${i}`)));
      for (const c of clients) {
        c.subscribe(`room:${round % 7}`, () => {});
        c.subscribe(`quiet:${round}`, () => {});
      }
      await Promise.all(clients.map((c) => c.ping()));
      for (const c of clients) c.close();
    };
    for (let r = 0; r < 10; r++) await churn(r);
    await eventually(
      () => tracker.stats(),
      (s) => s.members === 0 && s.sockets === 0,
      5000,
      'all gone',
    );
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let r = 10; r < 60; r++) await churn(r);
    await eventually(
      () => tracker.stats(),
      (s) => s.members === 0 && s.sockets === 0 && s.topics === 0,
      5000,
      'all gone again',
    );
    await sleep(50);
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    assert.ok(grown < 8 * 1024 * 1024, `heap grew ${grown} bytes over 1000 joins and leaves`);
  } finally {
    watcher.close();
    await one.close();
  }
});
