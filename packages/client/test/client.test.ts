// @tachyon/client against test/protocol-server.ts (raw uWebSockets.js): real server, real sockets.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ClientError, connect, type Status, type StatusInfo } from '../src/index.ts';
import { ProtocolError, startProtocolServer, type Conn, type ProtocolServer, type ProtocolServerOptions } from './protocol-server.ts';
import { eventually, freePort, recordingWebSocket, rejection, sleep } from './helpers.ts';

type Events = { chat: { text: string; from: string }; joined: { user: string }; welcome: { id: number } };
type Requests = {
  echo: { data: unknown; reply: unknown };
  'chat:send': { data: { room: string; text: string }; reply: { ok: boolean } };
  slow: { data: { ms: number }; reply: string };
  never: { data: undefined; reply: never };
  typing: { data: { room: string } };
  boom: { data: undefined; reply: never };
};

const fast = { minDelay: 10, maxDelay: 50 };

const chatServer = (extra: ProtocolServerOptions = {}) =>
  startProtocolServer({
    subscribe: (_ws, topic) => (topic.startsWith('private:') ? 'private topic' : true),
    events: {
      echo: (_ws, data) => data,
      'chat:send': (_ws, data) => {
        const d = data as { room?: unknown; text?: unknown };
        if (typeof d?.text !== 'string' || d.text.length > 10) {
          throw new ProtocolError('VALIDATION', 'Invalid event data', [{ path: ['text'], message: 'Too big' }]);
        }
        return { ok: true };
      },
      slow: async (_ws, data) => {
        await sleep((data as { ms: number }).ms);
        return 'done';
      },
      never: () => new Promise(() => {}),
      boom: () => {
        throw new Error('secret');
      },
    },
    ...extra,
  });

async function withServer(fn: (server: ProtocolServer) => Promise<void>, options?: ProtocolServerOptions) {
  const server = await chatServer(options);
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

function statusLog(live: { onStatus(f: (s: Status, i: StatusInfo) => void): unknown }) {
  const log: [Status, StatusInfo][] = [];
  live.onStatus((s, i) => log.push([s, i]));
  return log;
}

describe('connection', () => {
  test('connecting → open → closed; ready resolves', () =>
    withServer(async (server) => {
      const live = connect<Events, Requests>(server.url);
      const log = statusLog(live);
      assert.equal(live.status, 'connecting');
      await live.ready;
      assert.equal(live.status, 'open');
      live.close();
      assert.equal(live.status, 'closed');
      assert.deepEqual(
        log.map(([s]) => s),
        ['open', 'closed'],
      );
      assert.equal(log[1]![1].code, 1000);
      await eventually(() => server.sockets.size === 0, 2000, 'server saw the close');
    }));

  test('ready rejects when the client closes before the first open', async () => {
    const live = connect(`ws://127.0.0.1:${await freePort()}/live`, fast);
    live.close();
    const err = await rejection(live.ready);
    assert.ok(err instanceof ClientError);
    assert.equal(err.code, 'CLOSED');
  });

  test('protocols are passed to the WebSocket constructor', () =>
    withServer(async (server) => {
      const live = connect(server.url, { protocols: ['tachyon.v1', 'other'] });
      await live.ready;
      live.close();
    }));

  test('url may be a function, called for every attempt', async () => {
    const port = await freePort();
    const seen: string[] = [];
    let n = 0;
    const live = connect(() => `ws://127.0.0.1:${port}/live?attempt=${++n}`, fast);
    await eventually(() => n >= 3, 3000, 'three attempts');
    const server = await chatServer({ port, upgrade: (q) => (seen.push(q.get('attempt')!), true) });
    try {
      await live.ready;
      assert.ok(Number(seen.at(-1)) >= 3);
    } finally {
      live.close();
      await server.close();
    }
  });

  test('an injected WebSocket constructor is used', () =>
    withServer(async (server) => {
      const rec = recordingWebSocket();
      const live = connect<Events, Requests>(server.url, { WebSocket: rec.WebSocket });
      assert.equal(await live.request('echo', 1), 1);
      assert.equal(rec.created, 1);
      assert.deepEqual(rec.sent, ['{"type":"event","event":"echo","data":1,"ref":1}']);
      live.close();
    }));

  test('ping resolves with a round-trip time', () =>
    withServer(async (server) => {
      const live = connect(server.url);
      const rtt = await live.ping();
      assert.ok(rtt >= 0 && rtt < 1000);
      live.close();
    }));
});

describe('topics', () => {
  test('subscribe before open goes out as one batch; published events arrive with (event, data)', () =>
    withServer(async (server) => {
      const live = connect<Events, Requests>(server.url);
      const got: unknown[] = [];
      live.subscribe('room:1', (event, data) => got.push([event, data]));
      live.subscribe('room:2', (event, data) => got.push(['2', event, data]));
      await live.ping(); // barrier: the subscribe frame was handled
      assert.deepEqual(server.frames[0], '{"type":"subscribe","topics":["room:1","room:2"],"ref":2}');
      server.publish('room:1', 'chat', { text: 'hi', from: 'ann' });
      server.publish('room:2', 'joined', { user: 'bob' });
      server.publish('room:3', 'joined', { user: 'nobody' });
      await eventually(() => got.length === 2);
      assert.deepEqual(got, [
        ['chat', { text: 'hi', from: 'ann' }],
        ['2', 'joined', { user: 'bob' }],
      ]);
      live.close();
    }));

  // Fuzz finding (fuzz/targets/client-frames.mjs): a topic frame without an event name reached
  // listeners typed (event: string, data) with `undefined` as the event.
  test('a topic frame without a string event reaches no listener; the next good one does', () =>
    withServer(async (server) => {
      const live = connect<Events, Requests>(server.url);
      const got: unknown[] = [];
      live.subscribe('room:1', (event, data) => got.push([event, data]));
      await live.ping();
      const [ws] = server.sockets;
      ws!.send('{"topic":"room:1","data":1}');
      ws!.send('{"topic":"room:1","event":7,"data":2}');
      server.publish('room:1', 'chat', { text: 'hi', from: 'ann' });
      await live.ping(); // the pong comes after the three frames, on the same socket
      assert.deepEqual(got, [['chat', { text: 'hi', from: 'ann' }]]);
      live.close();
    }));

  test('subscribe while open sends a single-topic frame; unsubscribe after the last listener', () =>
    withServer(async (server) => {
      const live = connect<Events, Requests>(server.url);
      await live.ready;
      const a: unknown[] = [];
      const b: unknown[] = [];
      const offA = live.subscribe('room:1', (_e, d) => a.push(d));
      const offB = live.on('room:1', 'chat', (d) => b.push(d.text));
      await live.ping();
      assert.deepEqual(
        server.frames.filter((f) => f.includes('subscribe')),
        ['{"type":"subscribe","topic":"room:1","ref":1}'],
      );
      server.publish('room:1', 'chat', { text: 'one', from: 'x' });
      await eventually(() => b.length === 1);
      offA();
      offA(); // idempotent
      server.publish('room:1', 'chat', { text: 'two', from: 'x' });
      await eventually(() => b.length === 2);
      assert.equal(a.length, 1);
      offB();
      await live.ping();
      assert.equal(server.frames.filter((f) => f.includes('"unsubscribe"')).length, 1);
      server.publish('room:1', 'chat', { text: 'three', from: 'x' });
      await live.ping();
      assert.deepEqual(b, ['one', 'two']);
      live.close();
    }));

  test('on() filters one event of a topic', () =>
    withServer(async (server) => {
      const live = connect<Events, Requests>(server.url);
      const chats: string[] = [];
      const joins: string[] = [];
      live.on('room:1', 'chat', (d) => chats.push(d.text));
      live.on('room:1', 'joined', (d) => joins.push(d.user));
      await live.ping();
      server.publish('room:1', 'joined', { user: 'ann' });
      server.publish('room:1', 'chat', { text: 'hello', from: 'ann' });
      server.publish('room:1', 'chat', { text: 'again', from: 'ann' });
      await eventually(() => chats.length === 2);
      assert.deepEqual(chats, ['hello', 'again']);
      assert.deepEqual(joins, ['ann']);
      live.close();
    }));

  test('onEvent receives direct sends (no topic)', async () => {
    let server: ProtocolServer | undefined;
    server = await chatServer({ open: (ws) => setTimeout(() => server!.send(ws, 'welcome', { id: 42 }), 20) });
    const live = connect<Events, Requests>(server.url);
    try {
      const got: number[] = [];
      live.onEvent('welcome', (d) => got.push(d.id));
      await eventually(() => got.length === 1);
      assert.deepEqual(got, [42]);
    } finally {
      live.close();
      await server.close();
    }
  });

  test('denied subscription: onDenied hook, topic dropped; onError when there is no hook', async () => {
    const server = await chatServer();
    const errors: unknown[] = [];
    const live = connect<Events, Requests>(server.url, { onError: (e) => errors.push(e) });
    try {
      const denied: ClientError[] = [];
      const got: unknown[] = [];
      live.subscribe('__admin', () => got.push(1), { onDenied: (e) => denied.push(e) });
      live.on('private:x', 'chat', () => got.push(2));
      live.subscribe('room:1', () => {});
      await live.ping();
      await eventually(() => denied.length === 1 && errors.length === 1);
      assert.equal(denied[0]!.code, 'DENIED');
      assert.equal(denied[0]!.topic, '__admin');
      assert.match(denied[0]!.message, /__admin.*reserved topic/);
      const err = errors[0] as ClientError;
      assert.equal(err.code, 'DENIED');
      assert.equal(err.topic, 'private:x');
      assert.match(err.message, /private topic/);
      // dropped: not part of the next batch after a reconnect
      for (const ws of server.sockets) ws.end(1011, 'oops');
      await eventually(() => server.frames.filter((f) => f.includes('"topics"')).length === 2);
      assert.equal(server.frames.filter((f) => f.includes('"topics"'))[1], '{"type":"subscribe","topics":["room:1"],"ref":3}');
    } finally {
      live.close();
      await server.close();
    }
  });

  test('1000 messages on one topic arrive in order', () =>
    withServer(async (server) => {
      const live = connect<Events, Requests>(server.url);
      const seen: number[] = [];
      live.on('room:1', 'joined', (d) => seen.push(Number(d.user)));
      await live.ping();
      for (let i = 0; i < 1000; i++) server.publish('room:1', 'joined', { user: String(i) });
      await eventually(() => seen.length === 1000, 5000);
      assert.deepEqual(
        seen,
        Array.from({ length: 1000 }, (_, i) => i),
      );
      live.close();
    }));

  test('a throwing listener is reported and does not stop the others', () =>
    withServer(async (server) => {
      const errors: unknown[] = [];
      const live = connect<Events, Requests>(server.url, { onError: (e) => errors.push(e) });
      const got: string[] = [];
      live.on('room:1', 'chat', () => {
        throw new Error('listener bug');
      });
      live.on('room:1', 'chat', (d) => got.push(d.text));
      live.onStatus(() => {
        throw new Error('status bug');
      });
      await live.ping();
      server.publish('room:1', 'chat', { text: 'still here', from: 'x' });
      await eventually(() => got.length === 1);
      assert.deepEqual(
        errors.map((e) => (e as Error).message),
        ['status bug', 'listener bug'],
      );
      assert.equal(live.status, 'open');
      live.close();
    }));
});

describe('requests', () => {
  test('request/reply with typed data; emit sends no ref and gets no reply', () =>
    withServer(async (server) => {
      const live = connect<Events, Requests>(server.url);
      const reply = await live.request('chat:send', { room: '1', text: 'hi' }, { timeout: 5000 });
      assert.deepEqual(reply, { ok: true });
      assert.equal(live.emit('typing', { room: '1' }), true);
      await live.ping();
      assert.ok(server.frames.includes('{"type":"event","event":"typing","data":{"room":"1"}}'));
      live.close();
    }));

  test('error replies reject with code, message and issues', () =>
    withServer(async (server) => {
      const live = connect<Events, Requests>(server.url);
      const err = await rejection(live.request('chat:send', { room: '1', text: 'far too long' }));
      assert.ok(err instanceof ClientError);
      assert.equal(err.code, 'VALIDATION');
      assert.equal(err.message, 'Invalid event data');
      assert.equal(err.event, 'chat:send');
      assert.deepEqual(err.issues, [{ path: ['text'], message: 'Too big' }]);
      const unknown = connect(server.url);
      const e2 = await rejection(unknown.request('nope', {}));
      assert.equal(e2.code, 'UNKNOWN_EVENT');
      const e3 = await rejection(live.request('boom'));
      assert.equal(e3.code, 'HANDLER_ERROR');
      assert.equal(live.status, 'open');
      live.close();
      unknown.close();
    }));

  test('timeout rejects with a TimeoutError naming the event', () =>
    withServer(async (server) => {
      const live = connect<Events, Requests>(server.url);
      await live.ready;
      const t0 = Date.now();
      const err = await rejection(live.request('never', undefined, { timeout: 100 }));
      assert.ok(Date.now() - t0 >= 95);
      assert.equal(err.name, 'TimeoutError');
      assert.equal(err.code, 'TIMEOUT');
      assert.match(err.message, /"never".*100 ms/);
      // the client default applies when no per-request timeout is given
      const quick = connect<Events, Requests>(server.url, { timeout: 50 });
      assert.equal((await rejection(quick.request('slow', { ms: 500 }))).code, 'TIMEOUT');
      assert.equal(await quick.request('slow', { ms: 10 }, { timeout: 1000 }), 'done');
      // 0 and Infinity disable the timeout (Infinity must not overflow setTimeout into 1 ms)
      assert.equal(await quick.request('slow', { ms: 80 }, { timeout: 0 }), 'done');
      assert.equal(await quick.request('slow', { ms: 80 }, { timeout: Infinity }), 'done');
      live.close();
      quick.close();
    }));

  test('requests made while offline are queued and sent, in order, once connected', async () => {
    const port = await freePort();
    const live = connect<Events, Requests>(`ws://127.0.0.1:${port}/live`, fast);
    const log = statusLog(live);
    const replies = Promise.all([live.request('echo', 'a'), live.request('echo', 'b')]);
    live.subscribe('room:1', () => {});
    assert.equal(live.emit('typing', { room: '1' }), true);
    await eventually(() => log.filter(([s]) => s === 'reconnecting').length >= 2, 3000, 'a few failed attempts');
    const server = await chatServer({ port });
    try {
      assert.deepEqual(await replies, ['a', 'b']);
      assert.equal(live.status, 'open');
      assert.deepEqual(server.frames, [
        '{"type":"subscribe","topics":["room:1"],"ref":3}',
        '{"type":"event","event":"echo","data":"a","ref":1}',
        '{"type":"event","event":"echo","data":"b","ref":2}',
        '{"type":"event","event":"typing","data":{"room":"1"}}',
      ]);
    } finally {
      live.close();
      await server.close();
    }
  });

  test('a full offline queue rejects requests and refuses emits/raw sends', async () => {
    const live = connect<Events, Requests>(`ws://127.0.0.1:${await freePort()}/live`, { ...fast, maxQueue: 2 });
    const first = live.request('echo', 1);
    assert.equal(live.emit('typing', { room: '1' }), true);
    const err = await rejection(live.request('echo', 3));
    assert.equal(err.code, 'QUEUE_FULL');
    assert.match(err.message, /"echo".*queue is full \(2\)/);
    assert.equal(live.emit('typing', { room: '1' }), false);
    assert.equal(live.sendRaw('x'), false);
    live.close();
    assert.equal((await rejection(first)).code, 'CLOSED');
  });

  test('a queued request that times out leaves the queue', async () => {
    const port = await freePort();
    const live = connect<Events, Requests>(`ws://127.0.0.1:${port}/live`, { ...fast, maxQueue: 1 });
    assert.equal((await rejection(live.request('echo', 'late', { timeout: 30 }))).code, 'TIMEOUT');
    const server = await chatServer({ port });
    try {
      assert.equal(await live.request('echo', 'now'), 'now'); // the queue has room again
      assert.ok(!server.frames.some((f) => f.includes('late')));
    } finally {
      live.close();
      await server.close();
    }
  });

  test('a request in flight when the connection drops rejects with CONNECTION_LOST', () =>
    withServer(async (server) => {
      const live = connect<Events, Requests>(server.url, fast);
      await live.ready;
      const p = live.request('never');
      await live.ping();
      for (const ws of server.sockets) ws.end(1011, 'crash');
      const err = await rejection(p);
      assert.equal(err.code, 'CONNECTION_LOST');
      assert.equal(err.event, 'never');
      await eventually(() => live.status === 'open', 3000, 'reconnected');
      live.close();
    }));
});

describe('reconnects', () => {
  test('server restart on the same port: the client reconnects and resubscribes in one batch', async () => {
    // An explicit port: uWS sets SO_REUSEADDR only then, so the port can be bound again
    // right after the old server closed its connections (TIME_WAIT).
    const port = await freePort();
    const first = await chatServer({ port });
    const live = connect<Events, Requests>(first.url, fast);
    const log = statusLog(live);
    const got: string[] = [];
    live.on('room:a', 'chat', (d) => got.push(`a:${d.text}`));
    live.on('room:b', 'chat', (d) => got.push(`b:${d.text}`));
    live.subscribe('room:c', (_e, d) => got.push(`c:${(d as { text: string }).text}`));
    await live.ping();
    live.subscribe('room:d', () => {}); // subscribed while open, one topic at a time
    await live.ping();
    await first.close(1001, 'restarting');
    await eventually(() => live.status === 'reconnecting');
    await sleep(100); // a few refused attempts while nothing listens
    const second = await chatServer({ port });
    try {
      await eventually(() => live.status === 'open', 3000, 'reconnected');
      await live.ping();
      const subscribes = second.frames.filter((f) => f.includes('"subscribe"'));
      assert.deepEqual(subscribes, ['{"type":"subscribe","topics":["room:a","room:b","room:c","room:d"],"ref":5}']);
      assert.deepEqual(
        log.map(([s]) => s).filter((s, i, all) => s !== all[i - 1]),
        ['open', 'reconnecting', 'open'],
      );
      assert.ok(log.length > 3, 'refused attempts were retried');
      assert.deepEqual(log[1]![1].code, 1001);
      assert.deepEqual(log[1]![1].reason, 'restarting');
      second.publish('room:b', 'chat', { text: 'back', from: 'x' });
      second.publish('room:c', 'chat', { text: 'too', from: 'x' });
      await eventually(() => got.length === 2);
      assert.deepEqual(got, ['b:back', 'c:too']);
    } finally {
      live.close();
      await second.close();
    }
  });

  test('reconnects after non-terminal closes (1000, 1001, 1007, 1009, 1011, 4000, 1006)', () =>
    withServer(async (server) => {
      const live = connect(server.url, fast);
      const codes: number[] = [];
      live.onStatus((s, i) => s === 'reconnecting' && codes.push(i.code!));
      await live.ready;
      let n = 1;
      for (const code of [1000, 1001, 1007, 1009, 1011, 4000]) {
        for (const ws of server.sockets) ws.end(code, 'bye');
        await eventually(() => server.upgrades === n + 1 && live.status === 'open', 3000, `reconnect after ${code}`);
        n++;
      }
      for (const ws of server.sockets) ws.close(); // no close frame: the client sees 1006
      await eventually(() => server.upgrades === n + 1 && live.status === 'open', 3000, 'reconnect after 1006');
      assert.deepEqual(codes, [1000, 1001, 1007, 1009, 1011, 4000, 1006]);
      live.close();
    }));

  test('more than 1000 topics are resubscribed in frames of at most 1000', () =>
    withServer(async (server) => {
      const live = connect(server.url, fast);
      const topics = Array.from({ length: 1500 }, (_, i) => `t:${i}`);
      for (const t of topics) live.subscribe(t, () => {});
      await live.ping();
      const batches = server.frames.filter((f) => f.includes('"topics"')).map((f) => JSON.parse(f));
      assert.deepEqual(
        batches.map((b) => [b.topics.length, b.ref]),
        [
          [1000, 2],
          [500, 2],
        ],
      );
      assert.deepEqual(
        batches.flatMap((b) => b.topics),
        topics,
      );
      live.close();
    }));

  test('backoff grows with full jitter, and 4429 waits longer', async () => {
    const live = connect(`ws://127.0.0.1:${await freePort()}/live`, { minDelay: 10, maxDelay: 80, factor: 2 });
    const delays: number[] = [];
    live.onStatus((s, i) => s === 'reconnecting' && delays.push(i.delay!));
    await eventually(() => delays.length >= 6, 3000);
    live.close();
    const caps = [10, 20, 40, 80, 80, 80];
    for (const [i, d] of delays.slice(0, 6).entries()) assert.ok(d >= 0 && d <= caps[i]!, `delay ${i} = ${d} > ${caps[i]}`);

    const server = await chatServer({ open: (ws) => ws.end(4429, 'too slow') });
    try {
      const slow = connect(server.url, { minDelay: 10, maxDelay: 1000 });
      const info = await new Promise<StatusInfo>((r) => slow.onStatus((s, i) => s === 'reconnecting' && r(i)));
      slow.close();
      assert.equal(info.code, 4429);
      assert.ok(info.delay! >= 80 && info.delay! <= 160, `4429 delay ${info.delay}`); // cap 10·2⁴, at least half of it
    } finally {
      await server.close();
    }
  });

  test('maxRetries gives up with status closed', async () => {
    const live = connect(`ws://127.0.0.1:${await freePort()}/live`, { ...fast, maxRetries: 2 });
    const log = statusLog(live);
    const err = await rejection(live.ready);
    assert.equal(err.code, 'CLOSED');
    assert.deepEqual(
      log.map(([s]) => s),
      ['reconnecting', 'reconnecting', 'closed'],
    );
  });

  for (const code of [4403, 4401, 1008]) {
    test(`terminal close code ${code}: status closed, no reconnect, requests reject`, () =>
      withServer(
        async (server) => {
          const live = connect<Events, Requests>(server.url, fast);
          const log = statusLog(live);
          const p = rejection(live.request('never'));
          await eventually(() => live.status === 'closed', 2000, 'closed');
          assert.deepEqual(log.at(-1), ['closed', { code, reason: 'go away' }]);
          const err = await p;
          assert.equal(err.code, 'CLOSED');
          assert.match(err.message, new RegExp(`${code}: go away`));
          await live.ready; // it had opened before: ready stays resolved
          await sleep(1000);
          assert.equal(server.upgrades, 1);
          assert.equal(live.status, 'closed');
          assert.equal((await rejection(live.request('echo', 1))).code, 'CLOSED');
        },
        { open: (ws) => setTimeout(() => ws.end(code, 'go away'), 50) },
      ));
  }

  test('close() stops everything: pending requests reject, no reconnect, sends refused', () =>
    withServer(async (server) => {
      const live = connect<Events, Requests>(server.url, fast);
      live.subscribe('room:1', () => {});
      await live.ready;
      const pending = live.request('never');
      await live.ping();
      live.close();
      live.close(); // idempotent
      assert.equal((await rejection(pending)).code, 'CLOSED');
      assert.equal(live.emit('typing', { room: '1' }), false);
      assert.equal(live.sendRaw('x'), false);
      assert.equal((await rejection(live.ping())).code, 'CLOSED');
      await eventually(() => server.sockets.size === 0, 2000, 'server saw the close');
      await sleep(300);
      assert.equal(server.upgrades, 1);
      assert.equal(live.status, 'closed');
    }));
});

describe('raw frames', () => {
  test('batch frames: each event to its listeners in order; junk items skipped; a broken batch is raw text', async () => {
    const server = await chatServer({
      subscribe(ws, topic) {
        // Sent once the subscription is in place.
        setTimeout(() => {
          if (topic !== 'a' || ws.getUserData().closed) return;
          ws.send('[{"topic":"a","event":"x","data":1},null,5,{"topic":"a","event":"x","data":2},{"topic":"b","event":"x","data":9}]');
          ws.send('[{"topic": not json');
          ws.send('[1,2]');
        }, 0);
        return true;
      },
    });
    const live = connect(server.url);
    const got: unknown[] = [];
    const raw: unknown[] = [];
    live.subscribe('a', (event, data) => got.push([event, data]));
    live.onMessage((d) => raw.push(d));
    try {
      await eventually(() => raw.length === 2);
      assert.deepEqual(got, [
        ['x', 1],
        ['x', 2],
      ]);
      assert.deepEqual(raw, ['[{"topic": not json', '[1,2]']);
      assert.equal(live.status, 'open');
    } finally {
      live.close();
      await server.close();
    }
  });

  test('binary and non-protocol text go to onMessage, both ways', async () => {
    const received: [string, boolean][] = [];
    const server = await chatServer({
      message(ws: Conn, data, isBinary) {
        received.push([isBinary ? [...new Uint8Array(data)].join(',') : new TextDecoder().decode(data), isBinary]);
        ws.send(data, isBinary); // echo
      },
      open(ws) {
        ws.send('plain text');
        ws.send('{"foo":1}');
        ws.send('{"topic": not json');
      },
    });
    const live = connect(server.url);
    const got: unknown[] = [];
    live.onMessage((d) => got.push(typeof d === 'string' ? d : [...new Uint8Array(d)]));
    try {
      assert.equal(live.sendRaw(new Uint8Array([1, 2, 3])), true);
      assert.equal(live.sendRaw('hello raw'), true);
      await eventually(() => got.length === 5);
      assert.deepEqual(got, ['plain text', '{"foo":1}', '{"topic": not json', [1, 2, 3], 'hello raw']);
      assert.deepEqual(received, [
        ['1,2,3', true],
        ['hello raw', false],
      ]);
    } finally {
      live.close();
      await server.close();
    }
  });
});
