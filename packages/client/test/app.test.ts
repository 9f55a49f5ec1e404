// @tachyon/client against the framework's own server (`app.ws`): real server, real sockets.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { App } from '../../server/src/index.ts';
import { ClientError, connect, type Live, type Status } from '../src/index.ts';
import { eventually, freePort, recordingWebSocket, rejection, sleep } from './helpers.ts';

const sendSchema = z.object({ room: z.string(), text: z.string().max(10) });

// What a server would export for its clients.
type Events = { chat: { text: string; from: string }; joined: { user: string }; welcome: { user: string }; n: number; big: string };
type Requests = {
  'chat:send': { data: z.input<typeof sendSchema>; reply: { ok: boolean } };
  kick: { data: { code: number } };
  never: { data: undefined; reply: never };
  flood: { data: { count: number } };
  burst: { data: { count: number } };
};

const fast = { minDelay: 10, maxDelay: 50 };

interface Started {
  app: App;
  url: string;
  port: number;
  upgrades: number;
  /** Topics each connection asked for, in order (one array per connection). */
  subscribed: string[][];
  raw: [string, boolean][];
  close(): Promise<void>;
}

async function startApp(port = 0, appOptions: { maxBackpressure?: number; coalescePublishes?: boolean } = {}): Promise<Started> {
  const app = new App({ coalescePublishes: appOptions.coalescePublishes ?? false });
  const state = { upgrades: 0, subscribed: [] as string[][], raw: [] as [string, boolean][] };
  app.ws('/live', {
    upgrade: (req) => {
      state.upgrades++;
      if (req.query.user === 'nobody') return false;
      return { user: String(req.query.user ?? 'anon'), topics: [] as string[] };
    },
    open(ws) {
      state.subscribed.push(ws.data.topics);
      ws.send('welcome', { user: ws.data.user });
    },
    subscribe(ws, topic) {
      ws.data.topics.push(topic);
      return !topic.startsWith('private:');
    },
    events: {
      'chat:send': {
        schema: sendSchema,
        handler(ws, data) {
          app.publish(`room:${data.room}`, 'chat', { text: data.text, from: ws.data.user });
          return { ok: true };
        },
      },
      kick: { handler: (ws, data) => ws.close((data as { code: number }).code, 'kicked') },
      never: { handler: () => new Promise(() => {}) },
      burst: {
        handler(ws, data) {
          for (let i = 0; i < (data as { count: number }).count; i++)
            app.publish('room:1', 'chat', { text: String(i), from: ws.data.user });
        },
      },
      flood: {
        handler(ws, data) {
          const big = 'x'.repeat(2048);
          for (let i = 0; i < (data as { count: number }).count; i++) ws.send('big', big);
        },
      },
    },
    message(ws, data, isBinary) {
      state.raw.push([isBinary ? [...new Uint8Array(data)].join(',') : Buffer.from(data).toString(), isBinary]);
      ws.sendRaw(Buffer.from(data), isBinary);
    },
    maxBackpressure: appOptions.maxBackpressure ?? 1024 * 1024,
  });
  const server = await app.listen({ port, host: '127.0.0.1' });
  return {
    app,
    port: server.port,
    url: `ws://127.0.0.1:${server.port}/live`,
    get upgrades() {
      return state.upgrades;
    },
    subscribed: state.subscribed,
    raw: state.raw,
    close: () => server.close({ timeout: 2000 }),
  };
}

describe('against app.ws', () => {
  test('open, direct event, subscribe + publish, typed request/reply', async () => {
    const srv = await startApp();
    const live = connect<Events, Requests>(`${srv.url}?user=ann`);
    try {
      const welcome = new Promise<Events['welcome']>((r) => live.onEvent('welcome', r));
      const chats: string[] = [];
      live.on('room:1', 'chat', (d) => chats.push(`${d.from}: ${d.text}`));
      await live.ready;
      assert.equal(live.status, 'open');
      assert.deepEqual(await welcome, { user: 'ann' });
      const reply = await live.request('chat:send', { room: '1', text: 'hi' }, { timeout: 5000 });
      assert.deepEqual(reply, { ok: true });
      await eventually(() => chats.length === 1);
      assert.deepEqual(chats, ['ann: hi']);
      assert.ok((await live.ping()) >= 0);
    } finally {
      live.close();
      await srv.close();
    }
  });

  test('a coalescing server: batch frames reach each listener once per event, in order', async () => {
    const srv = await startApp(0, { coalescePublishes: true });
    const rec = recordingWebSocket();
    const live = connect<Events, Requests>(`${srv.url}?user=bo`, { WebSocket: rec.WebSocket });
    try {
      const chats: string[] = [];
      const all: string[] = [];
      live.on('room:1', 'chat', (d) => chats.push(d.text));
      live.subscribe('room:1', (event, data) => all.push(`${event}:${(data as { text: string }).text}`));
      await live.ready;
      await eventually(() => rec.received.some((f) => f.startsWith('{"type":"subscribed"')));
      live.emit('burst', { count: 20 });
      await eventually(() => chats.length === 20);
      await sleep(30);
      const expected = Array.from({ length: 20 }, (_, i) => String(i));
      assert.deepEqual(chats, expected);
      assert.deepEqual(
        all,
        expected.map((t) => `chat:${t}`),
      );
      const batches = rec.received.filter((f) => f.startsWith('[{"topic":"room:1"'));
      assert.equal(batches.length, 1, 'the 20 events arrived as one frame');
      assert.equal(JSON.parse(batches[0]!).length, 20);
    } finally {
      live.close();
      await srv.close();
    }
  });

  test('validation errors carry the schema issues', async () => {
    const srv = await startApp();
    const live = connect<Events, Requests>(srv.url);
    try {
      const err = await rejection(live.request('chat:send', { room: '1', text: 'much too long for this' }));
      assert.ok(err instanceof ClientError);
      assert.equal(err.code, 'VALIDATION');
      assert.equal(err.event, 'chat:send');
      assert.equal(err.issues?.length, 1);
      assert.deepEqual(err.issues![0]!.path, ['text']);
      assert.equal(typeof err.issues![0]!.message, 'string');
      const unknown = await rejection((live as unknown as Live).request('nope'));
      assert.equal(unknown.code, 'UNKNOWN_EVENT');
    } finally {
      live.close();
      await srv.close();
    }
  });

  test('denied subscriptions are reported and dropped', async () => {
    const srv = await startApp();
    const errors: ClientError[] = [];
    const live = connect<Events, Requests>(srv.url, { onError: (e) => errors.push(e as ClientError) });
    try {
      const denied = new Promise<ClientError>((r) => live.subscribe('private:1', () => {}, { onDenied: r }));
      live.subscribe('__system', () => {});
      live.subscribe('room:1', () => {});
      const d = await denied;
      assert.equal(d.code, 'DENIED');
      assert.equal(d.topic, 'private:1');
      await eventually(() => errors.length === 1);
      assert.equal(errors[0]!.topic, '__system');
      assert.match(errors[0]!.message, /reserved topic/);
    } finally {
      live.close();
      await srv.close();
    }
  });

  test('emit() of an event that fails on the server: the error (without ref) reaches onError', async () => {
    const srv = await startApp();
    const errors: ClientError[] = [];
    const live = connect<Events, Requests>(srv.url, { onError: (e) => errors.push(e as ClientError) });
    try {
      await live.ready;
      live.emit('chat:send', { room: '1', text: 'far more than ten characters' });
      await eventually(() => errors.length === 1);
      assert.ok(errors[0] instanceof ClientError);
      assert.equal(errors[0]!.code, 'VALIDATION');
      assert.ok(Array.isArray(errors[0]!.issues) && errors[0]!.issues.length > 0);
      // A valid emit gets no answer: nothing more reaches onError.
      assert.equal(await live.request('chat:send', { room: '1', text: 'ok' }).then((r) => r.ok), true);
      live.emit('chat:send', { room: '1', text: 'fine' });
      assert.equal(await live.request('chat:send', { room: '1', text: 'ok' }).then((r) => r.ok), true);
      assert.equal(errors.length, 1);
    } finally {
      live.close();
      await srv.close();
    }
  });

  test('server restart on the same port: reconnect and one batch resubscribe', async () => {
    // An explicit port: uWS sets SO_REUSEADDR only then (port 0 listeners have none, and
    // their port stays unbindable while the closed connections sit in TIME_WAIT).
    const port = await freePort();
    const first = await startApp(port);
    const rec = recordingWebSocket();
    const live = connect<Events, Requests>(first.url, { ...fast, WebSocket: rec.WebSocket });
    const statuses: Status[] = [];
    live.onStatus((s) => statuses.push(s));
    const got: string[] = [];
    for (const room of ['a', 'b', 'c']) live.on(`room:${room}`, 'chat', (d) => got.push(`${room}:${d.text}`));
    await live.ready;
    await live.ping();
    await first.close(); // sends 1001 to every socket
    await eventually(() => live.status === 'reconnecting');
    const second = await startApp(port);
    try {
      await eventually(() => live.status === 'open', 3000, 'reconnected');
      await live.ping();
      const subscribes = rec.sent.filter((f) => f.startsWith('{"type":"subscribe"'));
      assert.equal(subscribes.length, 2); // first connect, reconnect
      assert.deepEqual(JSON.parse(subscribes[1]!).topics, ['room:a', 'room:b', 'room:c']);
      assert.deepEqual(second.subscribed, [['room:a', 'room:b', 'room:c']]);
      assert.equal(statuses[1], 'reconnecting');
      assert.equal(statuses.at(-1), 'open');
      second.app.publish('room:b', 'chat', { text: 'back', from: 'server' });
      await eventually(() => got.length === 1);
      assert.deepEqual(got, ['b:back']);
    } finally {
      live.close();
      await second.close();
    }
  });

  test('server closes with 4403: status closed, no reconnect attempts', async () => {
    const srv = await startApp();
    const live = connect<Events, Requests>(srv.url, fast);
    const infos: unknown[] = [];
    live.onStatus((s, i) => infos.push([s, i]));
    try {
      await live.ready;
      const pending = rejection(live.request('never'));
      live.emit('kick', { code: 4403 });
      await eventually(() => live.status === 'closed');
      assert.deepEqual(infos.at(-1), ['closed', { code: 4403, reason: 'kicked' }]);
      assert.equal((await pending).code, 'CLOSED');
      await sleep(1000);
      assert.equal(srv.upgrades, 1);
    } finally {
      await srv.close();
    }
  });

  test('server closes with 1000 (a plain ws.close()): the client reconnects', async () => {
    const srv = await startApp();
    const live = connect<Events, Requests>(srv.url, fast);
    try {
      await live.ready;
      live.emit('kick', { code: 1000 });
      await eventually(() => srv.upgrades === 2 && live.status === 'open', 3000);
    } finally {
      live.close();
      await srv.close();
    }
  });

  // uWS drops the 4429 close frame itself when the send buffer is over maxBackpressure (the
  // very case 4429 is for), so the client may see 1006: either way it must reconnect.
  test('too slow (4429 or 1006): the client reconnects', async () => {
    const srv = await startApp(0, { maxBackpressure: 1024 });
    const live = connect<Events, Requests>(srv.url, { minDelay: 10, maxDelay: 1000 });
    const infos: { code?: number; delay?: number }[] = [];
    live.onStatus((s, i) => s === 'reconnecting' && infos.push(i));
    try {
      await live.ready;
      // 80 MB: more than the kernel's socket buffers can hold on any machine (this one lets
      // a receive buffer grow to 32 MB), so the server's send buffer fills and it closes.
      live.emit('flood', { count: 40_000 });
      await eventually(
        () => infos.length === 1,
        3000,
        `4429 close (${JSON.stringify(infos)}, status ${live.status}, upgrades ${srv.upgrades})`,
      );
      assert.ok(infos[0]!.code === 4429 || infos[0]!.code === 1006, `code ${infos[0]!.code}`);
      if (infos[0]!.code === 4429) assert.ok(infos[0]!.delay! >= 80, `delay ${infos[0]!.delay}`);
      await eventually(() => live.status === 'open' && srv.upgrades === 2, 3000, 'reconnected');
    } finally {
      live.close();
      await srv.close();
    }
  });

  test('a refused upgrade (401) looks like 1006: retried until maxRetries', async () => {
    const srv = await startApp();
    const live = connect<Events, Requests>(`${srv.url}?user=nobody`, { ...fast, maxRetries: 2 });
    const statuses: [Status, number | undefined][] = [];
    live.onStatus((s, i) => statuses.push([s, i.code]));
    try {
      assert.equal((await rejection(live.ready)).code, 'CLOSED');
      assert.deepEqual(statuses, [
        ['reconnecting', 1006],
        ['reconnecting', 1006],
        ['closed', 1006],
      ]);
      // Node's WebSocket (undici) repeats a handshake answered 401 once: 2 hits per attempt.
      const hits = srv.upgrades;
      assert.ok(hits >= 3);
      await sleep(200);
      assert.equal(srv.upgrades, hits);
    } finally {
      await srv.close();
    }
  });

  test('raw frames both ways, and 1000 published events in order', async () => {
    const srv = await startApp();
    const live = connect<Events, Requests>(srv.url);
    try {
      const raw: unknown[] = [];
      live.onMessage((d) => raw.push(typeof d === 'string' ? d : [...new Uint8Array(d)]));
      live.sendRaw(new Uint8Array([9, 8, 7]));
      live.sendRaw('not a protocol frame');
      await eventually(() => raw.length === 2);
      assert.deepEqual(raw, [[9, 8, 7], 'not a protocol frame']);
      assert.deepEqual(srv.raw, [
        ['9,8,7', true],
        ['not a protocol frame', false],
      ]);

      const seen: number[] = [];
      live.on('count', 'n', (n) => seen.push(n));
      await live.ping();
      for (let i = 0; i < 1000; i++) srv.app.publish('count', 'n', i);
      await eventually(() => seen.length === 1000, 5000);
      assert.deepEqual(
        seen,
        Array.from({ length: 1000 }, (_, i) => i),
      );
    } finally {
      live.close();
      await srv.close();
    }
  });
});
