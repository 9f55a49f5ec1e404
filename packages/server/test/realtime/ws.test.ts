import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { App, HttpError, type Socket } from '../../src/index.ts';
import { eventually, openWs, rawWebSocket, recordingLogger, sleep, start, type Running } from '../helpers.ts';

describe('websocket routes and the protocol', () => {
  let srv: Running;
  let app: App;
  const log = recordingLogger();
  const closes: { code: number; reason: string }[] = [];
  before(async () => {
    app = new App({ logger: log.logger });
    app.ws('/live', {
      upgrade: async (req) => {
        await sleep(1); // async upgrade: the uWS request is gone by now
        if (req.query.token === 'bad') return false;
        if (req.query.token === 'banned') throw new HttpError(403, 'banned');
        return { user: String(req.query.user ?? 'anon'), ua: req.header('user-agent') };
      },
      open(ws) {
        ws.subscribe(`__user:${ws.data.user}`); // server side may use reserved topics
        ws.send('welcome', { user: ws.data.user, ip: ws.ip });
      },
      subscribe: async (ws, topic) => topic.startsWith('room:') || topic === 'slow',
      events: {
        'chat:send': {
          schema: z.object({ room: z.string(), text: z.string().max(20) }),
          handler(ws, msg) {
            app.publish(`room:${msg.room}`, 'chat', { from: ws.data.user, text: msg.text });
            return { ok: true };
          },
        },
        whoami: { handler: (ws) => ({ user: ws.data.user, topics: ws.topics.sort() }) },
        boom: {
          handler() {
            throw new Error('handler exploded');
          },
        },
        forbidden: {
          handler() {
            throw new HttpError(403, 'not for you');
          },
        },
        later: { handler: async () => (await sleep(5), 'done') },
        echoPublish: {
          handler(ws, data) {
            ws.publish('room:x', 'others', data); // excludes the sender
          },
        },
      },
      message(ws, data, isBinary) {
        const text = isBinary ? '' : Buffer.from(data).toString();
        if (text === 'throw') throw new Error('message handler exploded');
        if (text === 'reject') return Promise.reject(new Error('async message handler rejected'));
        ws.sendRaw(Buffer.from(data), isBinary);
      },
      close(ws, code, reason) {
        closes.push({ code, reason });
      },
      maxPayloadLength: 1024,
    });
    app.ws('/rooms/:room', { upgrade: (req) => ({ room: req.params.room }), open: (ws) => ws.send('room', ws.data.room) });
    app.get('/live-http', () => 'http still works');
    srv = await start(app);
  });
  after(() => srv.close());

  const wsUrl = (path: string) => srv.url.replace('http', 'ws') + path;

  test('async upgrade gives ws.data; open can send; params on ws paths', async () => {
    const c = await openWs(wsUrl('/live?user=ada'), { headers: { 'user-agent': 'ua1' } });
    assert.deepEqual(await c.next(), { event: 'welcome', data: { user: 'ada', ip: '127.0.0.1' } });
    c.ws.send('{"type":"event","event":"whoami","ref":1}');
    assert.deepEqual(await c.next((m) => m.type === 'reply'), { type: 'reply', ref: 1, data: { user: 'ada', topics: ['__user:ada'] } });
    c.ws.close();
    const r = await openWs(wsUrl('/rooms/r%2042'));
    assert.deepEqual(await r.next(), { event: 'room', data: 'r 42' });
    r.ws.close();
  });

  test('async upgrade + a send of any size from open(): later client frames still arrive (uWS bug workaround)', async () => {
    const local = new App();
    let size = 0;
    let got = 0;
    local.ws('/s', {
      upgrade: async () => (await sleep(1), { n: size }),
      open: (ws) => ws.sendRaw('w'.repeat(ws.data.n)),
      message: () => void got++,
    });
    const s = await start(local);
    try {
      for (size = 40; size <= 90; size++) {
        const c = await openWs(s.url.replace('http', 'ws') + '/s');
        await c.next();
        const before = got;
        c.ws.send('hi');
        await eventually(() => got > before, 1000);
        c.ws.close();
      }
    } finally {
      await s.close();
    }
  });

  test('upgrade refusals: false → 401, HttpError → its status, cross-site origin → 403', async () => {
    assert.match((await rawWebSocket(srv.port, '/live?token=bad')).handshake, /^HTTP\/1\.1 401/);
    assert.match((await rawWebSocket(srv.port, '/live?token=banned')).handshake, /^HTTP\/1\.1 403/);
    const cross = await rawWebSocket(srv.port, '/live', { Origin: 'https://evil.example' });
    assert.match(cross.handshake, /^HTTP\/1\.1 403/);
    assert.ok(log.entries.some((e) => e.msg?.includes('origin not allowed')));
    const same = await rawWebSocket(srv.port, '/live', { Origin: `http://127.0.0.1:${srv.port}` });
    assert.match(same.handshake, /^HTTP\/1\.1 101/);
    same.destroy();
    assert.equal(await (await fetch(srv.url + '/live-http')).text(), 'http still works');
  });

  test('subscribe: allowed, denied by the hook, reserved, invalid, batched', async () => {
    const c = await openWs(wsUrl('/live?user=bo'));
    await c.next();
    c.ws.send('{"type":"subscribe","topic":"room:1","ref":1}');
    assert.deepEqual(await c.next(), { type: 'subscribed', topic: 'room:1', ref: 1 });
    c.ws.send('{"type":"subscribe","topic":"secret","ref":2}');
    assert.deepEqual(await c.next(), { type: 'denied', topic: 'secret', ref: 2, reason: 'not allowed' });
    c.ws.send('{"type":"subscribe","topic":"__user:ada","ref":3}');
    assert.deepEqual(await c.next(), { type: 'denied', topic: '__user:ada', ref: 3, reason: 'reserved topic' });
    for (const bad of ['""', '"has space"', '"quote\\"d"', JSON.stringify('x'.repeat(257)), '42', 'null']) {
      c.ws.send(`{"type":"subscribe","topic":${bad},"ref":4}`);
      assert.equal((await c.next()).reason, 'invalid topic', bad);
    }
    c.ws.send('{"type":"subscribe","topics":["room:a","room:b","nope"],"ref":5}');
    const answers = [await c.next(), await c.next(), await c.next()];
    assert.deepEqual(answers.map((a) => a.type).sort(), ['denied', 'subscribed', 'subscribed']);
    assert.equal(app.subscribers('room:a'), 1);
    c.ws.send('{"type":"unsubscribe","topic":"room:a","ref":6}');
    assert.deepEqual(await c.next(), { type: 'unsubscribed', topic: 'room:a', ref: 6 });
    assert.equal(app.subscribers('room:a'), 0);
    c.ws.close();
  });

  test('events: reply, publish to subscribers, validation issues, unknown, throwing handlers', async () => {
    const a = await openWs(wsUrl('/live?user=a'));
    const b = await openWs(wsUrl('/live?user=b'));
    await a.next();
    await b.next();
    b.ws.send('{"type":"subscribe","topic":"room:7","ref":1}');
    await b.next();
    a.ws.send('{"type":"event","event":"chat:send","data":{"room":"7","text":"hello"},"ref":10}');
    assert.deepEqual(await a.next(), { type: 'reply', ref: 10, data: { ok: true } });
    assert.deepEqual(await b.next(), { topic: 'room:7', event: 'chat', data: { from: 'a', text: 'hello' } });
    a.ws.send('{"type":"event","event":"chat:send","data":{"room":"7","text":"' + 'x'.repeat(30) + '"},"ref":11}');
    const invalid = await a.next();
    assert.equal(invalid.code, 'VALIDATION');
    assert.deepEqual(
      invalid.issues.map((i: { path: string[] }) => i.path),
      [['text']],
    );
    a.ws.send('{"type":"event","event":"nope","ref":12}');
    assert.deepEqual(await a.next(), { type: 'error', ref: 12, code: 'UNKNOWN_EVENT', message: 'Unknown event "nope"' });
    a.ws.send('{"type":"event","event":"boom","ref":13}');
    assert.deepEqual(await a.next(), { type: 'error', ref: 13, code: 'HANDLER_ERROR', message: 'Internal error' });
    assert.ok(
      log.entries.some((e) => e.level === 'error' && (e.obj as { err?: Error }).err?.message === 'handler exploded'),
      'logged',
    );
    a.ws.send('{"type":"event","event":"forbidden","ref":14}');
    assert.deepEqual(await a.next(), { type: 'error', ref: 14, code: 'HANDLER_ERROR', message: 'not for you' });
    a.ws.send('{"type":"event","event":"later","ref":15}');
    assert.deepEqual(await a.next(), { type: 'reply', ref: 15, data: 'done' });
    a.ws.send('{"type":"event","event":"chat:send","data":{"room":"7","text":"no ref"}}');
    assert.deepEqual(await b.next(), { topic: 'room:7', event: 'chat', data: { from: 'a', text: 'no ref' } });
    await sleep(30);
    assert.equal(a.messages.length, 0, 'no reply without a ref');
    a.ws.close();
    b.ws.close();
  });

  test('ws.publish excludes the sender', async () => {
    const a = await openWs(wsUrl('/live?user=a'));
    const b = await openWs(wsUrl('/live?user=b'));
    for (const c of [a, b]) {
      await c.next();
      c.ws.send('{"type":"subscribe","topic":"room:x","ref":1}');
      await c.next();
    }
    a.ws.send('{"type":"event","event":"echoPublish","data":5}');
    assert.deepEqual(await b.next(), { topic: 'room:x', event: 'others', data: 5 });
    await sleep(30);
    assert.equal(a.messages.length, 0);
    a.ws.close();
    b.ws.close();
  });

  test('malformed control JSON → BAD_FRAME, socket stays open; raw text and binary reach message()', async () => {
    const c = await openWs(wsUrl('/live'));
    await c.next();
    c.ws.send('{"type":"subscribe", oops');
    assert.deepEqual(await c.next(), { type: 'error', code: 'BAD_FRAME', message: 'Malformed JSON' });
    c.ws.send('{"type":"teleport","ref":2}');
    assert.equal((await c.next()).code, 'BAD_FRAME');
    c.ws.send('{"type":"subscribe","topics":"not-an-array","ref":3}');
    assert.equal((await c.next()).code, 'BAD_FRAME');
    c.ws.send('just text {"type":"event"}');
    assert.equal(await c.next(), 'just text {"type":"event"}');
    c.ws.send(new Uint8Array([0, 1, 2, 255]));
    assert.deepEqual([...new Uint8Array(await c.next())], [0, 1, 2, 255]);
    c.ws.send('{"type":"ping","ref":9}');
    assert.deepEqual(await c.next(), { type: 'pong', ref: 9 });
    c.ws.send('throw');
    await sleep(20);
    assert.ok(log.entries.some((e) => (e.obj as { err?: Error }).err?.message === 'message handler exploded'));
    c.ws.send('{"type":"ping","ref":10}');
    assert.deepEqual(await c.next(), { type: 'pong', ref: 10 }, 'still open after a throwing handler');
    c.ws.send('reject');
    await eventually(() => log.entries.some((e) => (e.obj as { err?: Error }).err?.message === 'async message handler rejected'));
    c.ws.send('{"type":"ping","ref":11}');
    assert.deepEqual(await c.next(), { type: 'pong', ref: 11 }, 'still open after a rejecting handler');
    c.ws.close();
  });

  test('a message over maxPayloadLength → close 1009; far over it → connection cut; server lives', async () => {
    const c = await openWs(wsUrl('/live'));
    await c.next();
    c.ws.send('x'.repeat(1500));
    assert.equal((await c.closed).code, 1009);
    const raw = await rawWebSocket(srv.port, '/live');
    raw.send(1, 'y'.repeat(200_000));
    await raw.ended;
    assert.equal(raw.closeCode(), null, 'beyond the hard cap uWS cuts the connection without a close frame');
    const ok = await openWs(wsUrl('/live'));
    assert.equal((await ok.next()).event, 'welcome');
    ok.ws.close();
  });

  test('invalid UTF-8 in a text frame: the connection is cut and logged, the server lives', async () => {
    const before = closes.length;
    const raw = await rawWebSocket(srv.port, '/live');
    await sleep(20);
    raw.send(1, Buffer.from([0x7b, 0xc3, 0x28, 0x7d]));
    await raw.ended;
    await eventually(() => closes.length > before);
    assert.equal(closes.at(-1)!.code, 1006);
    assert.match(closes.at(-1)!.reason, /UTF-8/);
    assert.ok(log.entries.some((e) => e.msg?.includes('protocol violation')));
    const ok = await openWs(wsUrl('/live'));
    assert.equal((await ok.next()).event, 'welcome');
    ok.ws.close();
  });

  test('publish checks topic and event names; socket methods after close are no-ops', async () => {
    assert.throws(() => app.publish('bad topic', 'e', 1), /Invalid topic/);
    assert.throws(() => app.publish('ok', 'bad"event', 1), /Invalid event name/);
    assert.throws(() => app.publish('ok', 'e', () => 1), /not JSON-serializable/);
    let kept!: Socket<any>;
    const local = new App();
    local.ws('/x', { open: (ws) => (kept = ws as Socket<any>) });
    const s = await start(local);
    const c = await openWs(s.url.replace('http', 'ws') + '/x');
    c.ws.close();
    await eventually(() => kept?.closed && local.connections === 0);
    assert.equal(kept.send('e', 1), 'closed');
    assert.equal(kept.subscribe('t'), false);
    assert.deepEqual(kept.topics, []);
    kept.close();
    kept.terminate();
    await s.close();
  });

  test('options are validated when the route is declared', () => {
    const a = new App();
    assert.throws(() => a.ws('/x', { idleTimeout: 5 }), /idleTimeout must be 0 or an integer from 8 to 960/);
    assert.throws(() => a.ws('/x', { idleTimeout: 961 }), /idleTimeout/);
    assert.throws(() => a.ws('/x', { maxPayloadLength: 0 }), /maxPayloadLength/);
    assert.throws(() => a.ws('/x', { maxBackpressure: 10 }), /maxBackpressure/);
    assert.throws(() => a.ws('/x', { backpressure: 'explode' as never }), /backpressure/);
    assert.throws(() => a.ws('/x', { events: { 'bad name': { handler() {} } } }), /invalid event name/);
    assert.throws(() => a.ws('/x', { events: { ok: {} as never } }), /needs a handler/);
    assert.throws(() => a.ws('/x', { allowedOrigins: 5 as never }), /allowedOrigins/);
    a.ws('/x', { idleTimeout: 0 });
    a.ws('/y', { idleTimeout: 8 });
  });
});

describe('routes without an upgrade hook (no Request built)', () => {
  test('same-origin, listed and missing origins upgrade; cross-site is 403 and logged; ip honours trustProxy', async () => {
    const log = recordingLogger();
    const app = new App({ logger: log.logger, trustProxy: 1 });
    const ips: string[] = [];
    app.ws('/plain', { open: (ws) => (ips.push(ws.ip), ws.send('hi', ws.data ?? null)) });
    app.ws('/listed', { allowedOrigins: ['https://app.example'], open: (ws) => ws.send('hi') });
    const srv = await start(app);
    try {
      const same = await rawWebSocket(srv.port, '/plain', { Origin: `http://127.0.0.1:${srv.port}`, 'X-Forwarded-For': '203.0.113.7' });
      assert.match(same.handshake, /^HTTP\/1\.1 101/);
      same.destroy();
      const none = await rawWebSocket(srv.port, '/plain'); // non-browser clients send no Origin
      assert.match(none.handshake, /^HTTP\/1\.1 101/);
      none.destroy();
      const cross = await rawWebSocket(srv.port, '/plain', { Origin: 'https://evil.example' });
      assert.match(cross.handshake, /^HTTP\/1\.1 403/);
      assert.ok(log.entries.some((e) => e.msg?.includes('origin not allowed')));
      const listed = await rawWebSocket(srv.port, '/listed', { Origin: 'https://app.example' });
      assert.match(listed.handshake, /^HTTP\/1\.1 101/);
      listed.destroy();
      const unlisted = await rawWebSocket(srv.port, '/listed', { Origin: `http://127.0.0.1:${srv.port}` });
      assert.match(unlisted.handshake, /^HTTP\/1\.1 403/);
      await eventually(() => ips.length === 2);
      assert.deepEqual(ips, ['203.0.113.7', '127.0.0.1']);
      // A real client through the same path: ws.data is undefined, events flow.
      const c = await openWs(srv.url.replace('http', 'ws') + '/plain');
      assert.deepEqual(await c.next(), { event: 'hi', data: null });
      c.ws.close();
    } finally {
      await srv.close();
    }
  });
});

describe('slow consumers', () => {
  for (const policy of ['close', 'drop'] as const) {
    test(`a client that never reads: memory stays bounded (policy ${policy})`, async () => {
      const app = new App();
      let sock!: Socket<any>;
      app.ws('/feed', {
        open: (ws) => ((sock = ws as Socket<any>), ws.subscribe('feed')),
        maxBackpressure: 256 * 1024,
        backpressure: policy,
      });
      const srv = await start(app);
      try {
        const raw = await rawWebSocket(srv.port, '/feed');
        raw.pause(); // never reads again: kernel buffers fill, then uWS's
        await eventually(() => sock !== undefined);
        const chunk = 'z'.repeat(4096);
        let maxBuffered = 0;
        const results = { sent: 0, backpressure: 0, dropped: 0, closed: 0 };
        for (let i = 0; i < 20_000 && (policy === 'drop' || !sock.closed); i++) {
          results[sock.send('tick', chunk)]++;
          app.publish('feed', 'tick', chunk);
          maxBuffered = Math.max(maxBuffered, sock.bufferedAmount);
          if (i % 500 === 0) await sleep(1);
        }
        assert.ok(maxBuffered <= 256 * 1024 + 8192, `buffer bounded: ${maxBuffered}`);
        assert.ok(results.dropped + results.closed > 0, 'the limit was reached');
        if (policy === 'close') {
          await eventually(() => app.connections === 0, 3000);
        } else {
          assert.equal(sock.closed, false, 'drop policy keeps the socket');
          assert.equal(app.connections, 1);
        }
        raw.destroy();
      } finally {
        await srv.close();
      }
    });
  }

  test('drain fires when the buffer empties', async () => {
    const app = new App();
    let drained = 0;
    let sock!: Socket<any>;
    app.ws('/d', { open: (ws) => (sock = ws as Socket<any>), drain: () => drained++, maxBackpressure: 64 * 1024, backpressure: 'drop' });
    const srv = await start(app);
    try {
      const c = await openWs(srv.url.replace('http', 'ws') + '/d');
      await eventually(() => sock !== undefined);
      while (sock.send('x', 'y'.repeat(8192)) !== 'backpressure' && !sock.closed);
      await eventually(() => drained > 0, 3000);
      c.ws.close();
    } finally {
      await srv.close();
    }
  });
});

describe('fan-out at scale', () => {
  for (const coalescePublishes of [false, true]) {
    test(`1000 clients in 50 rooms: every message delivered once, in order per topic${coalescePublishes ? ' (coalescePublishes: array frames)' : ''}`, async () => {
      const app = new App({ coalescePublishes });
      app.ws('/live', {
        events: {
          say: {
            schema: z.object({ room: z.number(), n: z.number() }),
            handler(ws, m) {
              app.publish(`room:${m.room}`, 'said', m);
            },
          },
        },
      });
      const srv = await start(app);
      const url = srv.url.replace('http', 'ws') + '/live';
      const rooms = 50;
      const perRoom = 20;
      const messagesPerRoom = 40;
      const clients: { room: number; got: number[]; ws: WebSocket }[] = [];
      let batchFrames = 0;
      try {
        for (let i = 0; i < rooms * perRoom; i++) {
          const room = i % rooms;
          const ws = new WebSocket(url);
          const c = { room, got: [] as number[], ws };
          let subscribed!: () => void;
          const ready = new Promise<void>((r) => (subscribed = r));
          ws.onmessage = (e) => {
            const frame = JSON.parse(e.data as string);
            if (Array.isArray(frame)) {
              assert.ok(coalescePublishes, 'array frames only when coalescing');
              batchFrames++;
            }
            for (const m of Array.isArray(frame) ? frame : [frame]) {
              if (m.type === 'subscribed') subscribed();
              else if (m.event === 'said') {
                assert.equal(m.topic, `room:${room}`);
                c.got.push(m.data.n);
              }
            }
          };
          await new Promise<void>((r) => (ws.onopen = () => r()));
          ws.send(JSON.stringify({ type: 'subscribe', topic: `room:${room}`, ref: 1 }));
          await ready;
          clients.push(c);
        }
        assert.equal(app.connections, 1000);
        // One sender per room sends its messages in order.
        for (let n = 0; n < messagesPerRoom; n++) {
          for (let room = 0; room < rooms; room++)
            clients[room]!.ws.send(JSON.stringify({ type: 'event', event: 'say', data: { room, n } }));
        }
        const expected = Array.from({ length: messagesPerRoom }, (_, n) => n);
        await eventually(() => clients.every((c) => c.got.length >= messagesPerRoom), 15_000);
        await sleep(100);
        for (const c of clients) assert.deepEqual(c.got, expected);
        // Each sender's 40 messages arrive in a few reads: coalescing must have batched some.
        if (coalescePublishes) assert.ok(batchFrames > 0, 'no batch frame was sent');
      } finally {
        for (const c of clients) c.ws.close();
        await srv.close();
      }
    });
  }
});

describe('shutdown', () => {
  test('server.close() closes every socket with 1001 and waits for them', async () => {
    const app = new App();
    let closedOnServer = 0;
    app.ws('/x', { close: () => closedOnServer++ });
    const srv = await start(app);
    const clients = await Promise.all(Array.from({ length: 5 }, () => openWs(srv.url.replace('http', 'ws') + '/x')));
    assert.equal(app.connections, 5);
    await srv.close();
    assert.equal(closedOnServer, 5, 'every close hook ran before close() resolved');
    for (const c of clients) assert.equal((await c.closed).code, 1001);
  });
});
