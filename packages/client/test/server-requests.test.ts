// Server → client requests (protocol v1.2): `ws.request(event, data)` on the framework's own
// server, answered by @tachyon/client's `live.handle(event, fn)`. Real server, real sockets.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { App, SocketRequestError, type Socket } from '../../server/src/index.ts';
import { connect, type Live } from '../src/index.ts';
import { eventually, recordingWebSocket, rejection, sleep } from './helpers.ts';

// What the server asks its clients: event → { data; reply }.
type Asks = {
  double: { data: { n: number }; reply: number };
  later: { data: { n: number }; reply: string };
  hang: {};
  fail: {};
  failAsync: {};
  bigint: {};
};

interface Server {
  app: App;
  url: string;
  /** The server side of each connection, in connection order. */
  sockets: Socket<unknown>[];
  close(): Promise<void>;
}

async function startServer(options: { maxPendingRequests?: number } = {}): Promise<Server> {
  const app = new App();
  const sockets: Socket<unknown>[] = [];
  app.ws('/live', { open: (ws) => void sockets.push(ws), ...options });
  const server = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: `ws://127.0.0.1:${server.port}/live`, sockets, close: () => server.close() };
}

/** A client with handlers for every event of Asks, connected, with its server socket. */
async function client(srv: Server): Promise<{ live: Live<{}, {}, Asks>; socket: Socket<unknown> }> {
  const before = srv.sockets.length;
  const live = connect<{}, {}, Asks>(srv.url, { onError: () => {} });
  live.handle('double', (d) => d.n * 2);
  live.handle('later', async (d) => {
    await sleep(5);
    return `n=${d.n}`;
  });
  live.handle('hang', () => new Promise<never>(() => {}));
  live.handle('fail', () => {
    throw new Error('nope, said the client');
  });
  live.handle('failAsync', async () => {
    throw new TypeError('rejected');
  });
  live.handle('bigint', () => 10n as never);
  await live.ready;
  await eventually(() => srv.sockets.length > before);
  return { live, socket: srv.sockets[srv.sockets.length - 1]! };
}

/** The SocketRequestError a request fails with. */
async function failure(p: Promise<unknown>): Promise<SocketRequestError> {
  const e = await rejection(p);
  assert.ok(e instanceof SocketRequestError, `a SocketRequestError, got ${e}`);
  return e;
}

describe('server → client requests', () => {
  let srv: Server;
  before(async () => (srv = await startServer()));
  after(() => srv.close());

  test('a sync handler answers; an async one too; the reply type is the caller’s', async () => {
    const { live, socket } = await client(srv);
    try {
      const n = await socket.request<number>('double', { n: 21 });
      assert.equal(n, 42);
      assert.equal(await socket.request('later', { n: 7 }), 'n=7');
      assert.equal(socket.pendingRequests, 0);
    } finally {
      live.close();
    }
  });

  test('no answer in time: TIMEOUT (a TimeoutError), the pending entry is gone, a late answer is ignored', async () => {
    const { live, socket } = await client(srv);
    try {
      const e = await failure(socket.request('hang', undefined, { timeout: 30 }));
      assert.equal(e.code, 'TIMEOUT');
      assert.equal(e.name, 'TimeoutError');
      assert.equal(e.event, 'hang');
      assert.match(e.message, /30 ms/);
      assert.equal(socket.pendingRequests, 0);
      // The socket still works.
      assert.equal(await socket.request('double', { n: 1 }), 2);
    } finally {
      live.close();
    }
  });

  test('the client closes mid-request: CLOSED; a request on a closed socket: CLOSED', async () => {
    const { live, socket } = await client(srv);
    const pending = socket.request('hang');
    await sleep(20);
    live.close();
    const e = await failure(pending);
    assert.equal(e.code, 'CLOSED');
    await eventually(() => socket.closed);
    assert.equal(socket.pendingRequests, 0);
    assert.equal((await failure(socket.request('double', { n: 1 }))).code, 'CLOSED');
  });

  test('the server closes the socket mid-request: CLOSED', async () => {
    const { live, socket } = await client(srv);
    try {
      const pending = socket.request('hang', undefined, { timeout: 0 });
      await sleep(20);
      socket.close(4000, 'bye');
      assert.equal((await failure(pending)).code, 'CLOSED');
    } finally {
      live.close();
    }
  });

  test('the client handler throws or rejects: CLIENT_ERROR with its message', async () => {
    const { live, socket } = await client(srv);
    try {
      const e = await failure(socket.request('fail'));
      assert.equal(e.code, 'CLIENT_ERROR');
      assert.equal(e.message, 'nope, said the client');
      const a = await failure(socket.request('failAsync'));
      assert.equal(a.code, 'CLIENT_ERROR');
      assert.equal(a.message, 'rejected');
      const b = await failure(socket.request('bigint'));
      assert.equal(b.code, 'CLIENT_ERROR');
      assert.match(b.message, /BigInt/, "the serializer's own message");
    } finally {
      live.close();
    }
  });

  test('no handler on the client: NO_HANDLER; handle() returns the remover; a later handler replaces', async () => {
    const { live, socket } = await client(srv);
    try {
      const e = await failure(socket.request('unknown:event'));
      assert.equal(e.code, 'NO_HANDLER');
      assert.equal(e.event, 'unknown:event');
      const off = live.handle('double', (d) => d.n * 3);
      assert.equal(await socket.request('double', { n: 2 }), 6);
      off();
      off(); // idempotent
      assert.equal((await failure(socket.request('double', { n: 2 }))).code, 'NO_HANDLER');
    } finally {
      live.close();
    }
  });

  test('1000 concurrent requests on one socket, each answered with its own reply', async () => {
    const { live, socket } = await client(srv);
    try {
      const all = await Promise.all(Array.from({ length: 1000 }, (_, i) => socket.request<number>(i % 2 ? 'double' : 'later', { n: i })));
      assert.deepEqual(
        all,
        Array.from({ length: 1000 }, (_, i) => (i % 2 ? i * 2 : `n=${i}`)),
      );
      assert.equal(socket.pendingRequests, 0);
    } finally {
      live.close();
    }
  });

  test('past maxPendingRequests: TOO_MANY_REQUESTS at once, and room again after answers', async () => {
    const small = await startServer({ maxPendingRequests: 3 });
    const { live, socket } = await client(small);
    try {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      live.handle('later', async (d) => {
        await gate;
        return `n=${d.n}`;
      });
      const three = [1, 2, 3].map((n) => socket.request('later', { n }));
      const e = await failure(socket.request('later', { n: 4 }));
      assert.equal(e.code, 'TOO_MANY_REQUESTS');
      assert.match(e.message, /3 requests/);
      assert.equal(socket.pendingRequests, 3);
      release();
      assert.deepEqual(await Promise.all(three), ['n=1', 'n=2', 'n=3']);
      assert.equal(await socket.request('later', { n: 5 }), 'n=5');
    } finally {
      live.close();
      await small.close();
    }
  });

  test('programming errors throw at once: bad event name, data that is not JSON, a bad timeout, a bad route limit', async () => {
    const { live, socket } = await client(srv);
    try {
      assert.throws(() => socket.request('bad name'), TypeError);
      assert.throws(() => socket.request('double', { n: 1n }), TypeError);
      assert.throws(() => socket.request('double', { n: 1 }, { timeout: -1 }), TypeError);
      assert.throws(() => socket.request('double', { n: 1 }, { timeout: Number.NaN }), TypeError);
      assert.throws(() => socket.request('double', { n: 1 }, { timeout: 2 ** 31 }), TypeError);
      assert.equal(socket.pendingRequests, 0);
      const app = new App();
      assert.throws(() => app.ws('/x', { maxPendingRequests: 0 }), /maxPendingRequests/);
      assert.throws(() => app.ws('/y', { maxPendingRequests: 1.5 }), /maxPendingRequests/);
    } finally {
      live.close();
    }
  });
});

describe('server → client requests: bad input from the client', () => {
  let srv: Server;
  before(async () => (srv = await startServer()));
  after(() => srv.close());

  /** A bare WebSocket (no @tachyon/client) and its server socket: it sends what we tell it. */
  async function bare(): Promise<{ ws: WebSocket; frames: any[]; socket: Socket<unknown> }> {
    const count = srv.sockets.length;
    const ws = new WebSocket(srv.url);
    const frames: any[] = [];
    ws.onmessage = (e) => frames.push(JSON.parse(String(e.data)));
    await new Promise((r) => (ws.onopen = r));
    await eventually(() => srv.sockets.length > count);
    return { ws, frames, socket: srv.sockets[srv.sockets.length - 1]! };
  }

  /** Sends a ping and waits for its pong: every earlier frame has been handled. */
  async function barrier(ws: WebSocket, frames: any[], ref: number): Promise<void> {
    ws.send(JSON.stringify({ type: 'ping', ref }));
    await eventually(() => frames.some((f) => f.type === 'pong' && f.ref === ref));
  }

  test('a client that does not know request frames (a v1.0/v1.1 client) ignores them: the server times out', async () => {
    const { ws, frames, socket } = await bare();
    try {
      const e = await failure(socket.request('double', { n: 1 }, { timeout: 50 }));
      assert.equal(e.code, 'TIMEOUT');
      assert.deepEqual(frames[0], { type: 'request', id: 1, event: 'double', data: { n: 1 } });
    } finally {
      ws.close();
    }
  });

  test('replies for unknown ids, twice for one id, and after a timeout are ignored (no answer, nothing settled twice)', async () => {
    const { ws, frames, socket } = await bare();
    try {
      ws.send(JSON.stringify({ type: 'reply', id: 12345, data: 1 }));
      ws.send(JSON.stringify({ type: 'reply', id: 0 }));
      const p = socket.request('double', { n: 1 });
      await eventually(() => frames.some((f) => f.type === 'request'));
      const { id } = frames.find((f) => f.type === 'request');
      ws.send(JSON.stringify({ type: 'reply', id, data: 'first' }));
      ws.send(JSON.stringify({ type: 'reply', id, data: 'second' }));
      assert.equal(await p, 'first');
      const late = failure(socket.request('double', { n: 2 }, { timeout: 20 }));
      assert.equal((await late).code, 'TIMEOUT');
      ws.send(JSON.stringify({ type: 'reply', id: id + 1, data: 'too late' }));
      await barrier(ws, frames, 1);
      assert.deepEqual(
        frames.filter((f) => f.type === 'error'),
        [],
      );
    } finally {
      ws.close();
    }
  });

  test('malformed reply frames get BAD_FRAME; the socket stays open and a pending request still settles', async () => {
    const { ws, frames, socket } = await bare();
    try {
      const p = socket.request('double', { n: 1 });
      const bad = [
        '{"type":"reply"}',
        '{"type":"reply","id":"1","data":2}',
        '{"type":"reply","id":-1}',
        '{"type":"reply","id":1.5}',
        '{"type":"reply","id":1,"error":"boom"}',
        '{"type":"reply","id":1,"error":null}',
        '{"type":"reply","id":1,',
      ];
      for (const f of bad) ws.send(f);
      await barrier(ws, frames, 1);
      const errors = frames.filter((f) => f.type === 'error');
      assert.equal(errors.length, bad.length);
      for (const e of errors) assert.equal(e.code, 'BAD_FRAME');
      // An error object without a code or message is still the client's error.
      ws.send('{"type":"reply","id":1,"error":{}}');
      const e = await failure(p);
      assert.equal(e.code, 'CLIENT_ERROR');
      assert.equal(e.message, 'the client handler failed');
      // A long message is cut at 1024 characters.
      const q = socket.request('double', { n: 2 });
      ws.send(JSON.stringify({ type: 'reply', id: 2, error: { code: 'CLIENT_ERROR', message: 'x'.repeat(5000) } }));
      assert.equal((await failure(q)).message.length, 1024);
    } finally {
      ws.close();
    }
  });

  test('a reply flood (10 000 replies for ids never asked) costs nothing lasting: no answers, the socket works', async () => {
    const { ws, frames, socket } = await bare();
    try {
      for (let i = 0; i < 10_000; i++) ws.send(`{"type":"reply","id":${1000 + i},"data":${i}}`);
      await barrier(ws, frames, 1);
      assert.deepEqual(
        frames.filter((f) => f.type === 'error'),
        [],
      );
      assert.equal(socket.pendingRequests, 0);
      const p = socket.request('double', { n: 1 });
      await eventually(() => frames.some((f) => f.type === 'request'));
      ws.send('{"type":"reply","id":1,"data":2}');
      assert.equal(await p, 2);
    } finally {
      ws.close();
    }
  });

  test('the connection is cut mid-request (no close frame): CLOSED', async () => {
    const { ws, frames, socket } = await bare();
    const p = socket.request('double', { n: 1 }, { timeout: 5000 });
    await eventually(() => frames.some((f) => f.type === 'request'));
    socket.terminate();
    assert.equal((await failure(p)).code, 'CLOSED');
    ws.close();
  });
});

describe('app.requestAll: an acknowledged broadcast to a topic’s subscribers in this process', () => {
  let srv: Server;
  before(async () => (srv = await startServer()));
  after(() => srv.close());

  test('every subscriber is asked: replies by socket id, the others missing with their reason', async () => {
    const a = await client(srv);
    const b = await client(srv);
    const c = await client(srv);
    const outsider = await client(srv);
    try {
      b.live.handle('double', () => {
        throw new Error('b refuses');
      });
      for (const x of [a, b, c]) {
        x.live.subscribe('room', () => {});
        await x.live.ping();
      }
      const withSubscriber = await srv.app.requestAll<number>('room', 'double', { n: 5 }, { timeout: 200 });
      // Ids are "<worker>:<ws.id>", worker 0 outside a cluster.
      const id = (x: { socket: { id: number } }) => `0:${x.socket.id}`;
      assert.deepEqual(
        withSubscriber.replies.sort((x, y) => x.id.localeCompare(y.id)),
        [
          { id: id(a), data: 10 },
          { id: id(c), data: 10 },
        ].sort((x, y) => x.id.localeCompare(y.id)),
      );
      assert.deepEqual(
        withSubscriber.missing.map((m) => [m.id, m.error.code, m.error.message]),
        [[id(b), 'CLIENT_ERROR', 'b refuses']],
      );
      // Timeouts and missing handlers; a subscriber gone since the index was built is not asked.
      c.live.close();
      await eventually(() => srv.app.subscribers('room') === 2);
      const slow = await srv.app.requestAll('room', 'hang', undefined, { timeout: 50 });
      assert.deepEqual(slow.replies, []);
      assert.deepEqual(
        slow.missing.map((m) => m.error.code),
        ['TIMEOUT', 'TIMEOUT'],
      );
      assert.deepEqual(slow.missing.map((m) => m.id).sort(), [id(a), id(b)].sort());
      const none = await srv.app.requestAll('room', 'unknown:event', undefined, { timeout: 500 });
      assert.deepEqual(
        none.missing.map((m) => m.error.code),
        ['NO_HANDLER', 'NO_HANDLER'],
      );
      // Nobody subscribed: nothing to wait for.
      assert.deepEqual(await srv.app.requestAll('empty', 'double', { n: 1 }), { replies: [], missing: [] });
      assert.equal(outsider.socket.pendingRequests, 0, 'a socket not subscribed is never asked');
    } finally {
      for (const x of [a, b, c, outsider]) x.live.close();
    }
  });

  test('bad input throws at once: topic, event name, data, timeout', () => {
    assert.throws(() => srv.app.requestAll('bad topic', 'double'), TypeError);
    assert.throws(() => srv.app.requestAll('room', 'bad name'), TypeError);
    assert.throws(() => srv.app.requestAll('room', 'double', { n: 1n }), TypeError);
    assert.throws(() => srv.app.requestAll('room', 'double', {}, { timeout: -5 }), TypeError);
  });
});

describe('server → client requests: the client side of the wire', () => {
  let srv: Server;
  before(async () => (srv = await startServer()));
  after(() => srv.close());

  test('reply frames as protocol.md says: data, NO_HANDLER and CLIENT_ERROR errors, with the server’s id', async () => {
    const rec = recordingWebSocket();
    const count = srv.sockets.length;
    const live = connect<{}, {}, Asks>(srv.url, { WebSocket: rec.WebSocket as never, onError: () => {} });
    try {
      live.handle('double', (d) => d.n * 2);
      live.handle('fail', () => {
        throw new Error('no');
      });
      await live.ready;
      await eventually(() => srv.sockets.length > count);
      const socket = srv.sockets[srv.sockets.length - 1]!;
      await socket.request('double', { n: 1 });
      await rejection(socket.request('nothing'));
      await rejection(socket.request('fail'));
      const replies = rec.sent.filter((f) => f.startsWith('{"type":"reply"'));
      assert.deepEqual(replies, [
        '{"type":"reply","id":1,"data":2}',
        '{"type":"reply","id":2,"error":{"code":"NO_HANDLER","message":"No handler for \\"nothing\\""}}',
        '{"type":"reply","id":3,"error":{"code":"CLIENT_ERROR","message":"no"}}',
      ]);
    } finally {
      live.close();
    }
  });

  test('an answer still running when the connection is lost is dropped, not sent on the next connection', async () => {
    const rec = recordingWebSocket();
    const count = srv.sockets.length;
    const live = connect<{}, {}, Asks>(srv.url, { WebSocket: rec.WebSocket as never, minDelay: 5, maxDelay: 20, onError: () => {} });
    try {
      let answered = false;
      live.handle('later', async (d) => {
        await sleep(150);
        answered = true;
        return `n=${d.n}`;
      });
      await live.ready;
      await eventually(() => srv.sockets.length > count);
      const first = srv.sockets[srv.sockets.length - 1]!;
      const p = first.request('later', { n: 1 });
      await sleep(20);
      first.terminate();
      assert.equal((await failure(p)).code, 'CLOSED');
      await eventually(() => rec.created === 2 && live.status === 'open', 3000);
      await eventually(() => answered, 3000);
      await live.ping(); // a barrier: anything sent before it has reached the server
      assert.deepEqual(
        rec.sent.filter((f) => f.startsWith('{"type":"reply"')),
        [],
      );
      // The new connection answers its own requests.
      live.handle('double', (d) => d.n * 2);
      const second = srv.sockets[srv.sockets.length - 1]!;
      assert.notEqual(second, first);
      assert.equal(await second.request('double', { n: 4 }), 8);
    } finally {
      live.close();
    }
  });
});
