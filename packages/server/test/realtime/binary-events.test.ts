// Binary events (docs/protocol.md, "Binary events"): a binary frame whose first byte is a
// declared code runs its event as an event frame without `ref` would: rate limit, aroundEvent
// hooks, schema, handler, no reply; failures as error frames without `ref`. Other binary
// frames still go to the `message` hook. Real sockets, a real server.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { App, type WsBehavior } from '../../src/index.ts';
import { eventually, openWs, recordingLogger, sleep, start, type Running } from '../helpers.ts';

const utf8 = new TextEncoder();
const frame = (code: number, payload: string | number[] = []) =>
  new Uint8Array([code, ...(typeof payload === 'string' ? utf8.encode(payload) : payload)]);

describe('binary events', () => {
  let srv: Running;
  let url: string;
  const got: unknown[] = [];
  const raw: [number[], boolean][] = [];
  const outcomes: [string, string][] = [];
  const logger = recordingLogger();
  before(async () => {
    const app = new App({ logger: logger.logger });
    app.ws('/live', {
      hooks: {
        aroundEvent: async (ws, event, run) => {
          const outcome = await run();
          outcomes.push([event, outcome.code]);
        },
      },
      events: {
        keys: {
          binary: 1,
          schema: z.string().max(10),
          handler(ws, text) {
            got.push(text);
            return 'a reply nobody gets';
          },
        },
        pos: {
          binary: { code: 2, decode: (bytes) => ({ x: bytes[0], y: bytes[1] }) },
          schema: z.object({ x: z.number(), y: z.number() }),
          handler(ws, p) {
            got.push(p);
          },
        },
        boom: {
          binary: 3,
          handler() {
            throw new Error('kaboom');
          },
        },
        text: {
          binary: 6,
          handler(ws, text) {
            got.push(text);
          },
        },
        undecodable: {
          binary: {
            code: 255,
            decode() {
              throw new Error('not my format');
            },
          },
          handler(ws, data) {
            got.push(data);
          },
        },
      },
      message(ws, ab, isBinary) {
        raw.push([[...new Uint8Array(ab)], isBinary]);
      },
    });
    srv = await start(app);
    url = srv.url.replace('http', 'ws') + '/live';
  });
  after(() => srv.close());

  const reset = () => {
    got.length = 0;
    raw.length = 0;
    outcomes.length = 0;
  };

  test('the handler runs with the decoded UTF-8 text, and nothing is answered', async () => {
    reset();
    const c = await openWs(url);
    c.ws.send(frame(1, 'héllo ✓'));
    c.ws.send(frame(1));
    await eventually(() => got.length === 2);
    assert.deepEqual(got, ['héllo ✓', '']);
    assert.deepEqual(outcomes, [
      ['keys', 'OK'],
      ['keys', 'OK'],
    ]);
    // A ping after them: its pong is the first frame back, so no reply came before it.
    c.ws.send('{"type":"ping","ref":9}');
    assert.deepEqual(await c.next(), { type: 'pong', ref: 9 });
    assert.deepEqual(c.messages, []);
    c.ws.close();
  });

  test('the text decode: short ASCII (decoded in JS), the 32-byte edge, ASCII then UTF-8, long text, NUL bytes', async () => {
    reset();
    const c = await openWs(url);
    const texts = ['a'.repeat(32), 'b'.repeat(33), 'abc€', `${'x'.repeat(31)}é`, 'y'.repeat(1000), 'a\u0000b\u007f', '~'];
    for (const t of texts) c.ws.send(frame(6, t));
    await eventually(() => got.length === texts.length);
    assert.deepEqual(got, texts);
    // Invalid UTF-8 after ASCII, and a lone continuation byte, on either side of the edge.
    c.ws.send(frame(6, [0x61, 0x62, 0x80]));
    assert.equal((await c.next()).code, 'BAD_FRAME');
    c.ws.send(frame(6, [...utf8.encode('z'.repeat(40)), 0xff]));
    assert.equal((await c.next()).code, 'BAD_FRAME');
    c.ws.close();
  });

  test('a custom decode gets the bytes after the code', async () => {
    reset();
    const c = await openWs(url);
    c.ws.send(frame(2, [7, 9]));
    await eventually(() => got.length === 1);
    assert.deepEqual(got, [{ x: 7, y: 9 }]);
    c.ws.close();
  });

  test('the same event still works as a JSON event frame, with its reply', async () => {
    reset();
    const c = await openWs(url);
    c.ws.send('{"type":"event","event":"keys","data":"json","ref":4}');
    assert.deepEqual(await c.next(), { type: 'reply', ref: 4, data: 'a reply nobody gets' });
    assert.deepEqual(got, ['json']);
    c.ws.close();
  });

  test('failures come back as error frames without ref', async () => {
    reset();
    const c = await openWs(url);
    c.ws.send(frame(1, 'far too long for the schema'));
    const validation = await c.next();
    assert.equal(validation.type, 'error');
    assert.equal(validation.code, 'VALIDATION');
    assert.equal('ref' in validation, false);
    assert.ok(Array.isArray(validation.issues));

    c.ws.send(frame(2, [1])); // decode gives { x: 1, y: undefined }: the schema refuses it
    assert.equal((await c.next()).code, 'VALIDATION');

    c.ws.send(frame(3, 'x'));
    assert.deepEqual(await c.next(), { type: 'error', code: 'HANDLER_ERROR', message: 'Internal error' });
    assert.ok(logger.entries.some((l) => l.msg === 'websocket event handler failed'));
    assert.deepEqual(outcomes, [
      ['keys', 'VALIDATION'],
      ['pos', 'VALIDATION'],
      ['boom', 'HANDLER_ERROR'],
    ]);
    assert.deepEqual(got, []);
    c.ws.close();
  });

  test('a payload that does not decode is BAD_FRAME (invalid UTF-8, a decode that throws), never a crash', async () => {
    reset();
    const c = await openWs(url);
    c.ws.send(frame(1, [0x68, 0xff, 0xfe, 0x69]));
    const bad = await c.next();
    assert.equal(bad.type, 'error');
    assert.equal(bad.code, 'BAD_FRAME');
    assert.equal('ref' in bad, false);
    assert.match(bad.message, /Binary event "keys"/);
    c.ws.send(frame(1, [0xc3])); // a truncated two-byte sequence
    assert.equal((await c.next()).code, 'BAD_FRAME');
    c.ws.send(frame(255, 'anything'));
    assert.match((await c.next()).message, /Binary event "undecodable"/);
    assert.ok(logger.entries.some((l) => l.msg === 'websocket binary event could not be decoded'));
    // Not events: the handlers and the aroundEvent hooks never saw them; the socket lives on.
    assert.deepEqual(got, []);
    assert.deepEqual(outcomes, []);
    c.ws.send(frame(1, 'ok'));
    await eventually(() => got.length === 1);
    c.ws.close();
  });

  test('an undeclared code and an empty binary frame go to the message hook', async () => {
    reset();
    const c = await openWs(url);
    c.ws.send(frame(9, [1, 2]));
    c.ws.send(new Uint8Array(0));
    c.ws.send(frame(0, 'zero is never a code'));
    await eventually(() => raw.length === 3);
    assert.deepEqual(raw, [
      [[9, 1, 2], true],
      [[], true],
      [[...frame(0, 'zero is never a code')], true],
    ]);
    assert.deepEqual(got, []);
    // Text frames are never binary events, even when they start with a code's byte.
    c.ws.send('\u0001text');
    await eventually(() => raw.length === 4);
    assert.deepEqual(raw[3], [[1, 0x74, 0x65, 0x78, 0x74], false]);
    assert.deepEqual(got, []);
    c.ws.close();
  });
});

test('binary events: without a message hook, an undeclared code is a BAD_FRAME answer as before', async () => {
  const app = new App({ logger: recordingLogger().logger });
  app.ws('/live', { events: { k: { binary: 1, handler() {} } } });
  const srv = await start(app);
  const c = await openWs(srv.url.replace('http', 'ws') + '/live');
  c.ws.send(frame(2, 'x'));
  assert.deepEqual(await c.next(), { type: 'error', code: 'BAD_FRAME', message: 'Binary frame, and this route has no message handler' });
  c.ws.close();
  await srv.close();
});

test("binary events: the route's rate limit applies (RATE_LIMITED without ref, the hooks see it)", async () => {
  let handled = 0;
  const outcomes: string[] = [];
  const app = new App({ logger: recordingLogger().logger });
  app.ws('/live', {
    rateLimit: { messagesPerSecond: 3, closeAfter: 0 },
    events: {
      k: {
        binary: 1,
        handler() {
          handled++;
        },
      },
    },
  });
  app.addHook('aroundEvent', async (ws, event, run) => outcomes.push(`${event}:${(await run()).code}`));
  const srv = await start(app);
  const c = await openWs(srv.url.replace('http', 'ws') + '/live');
  for (let i = 0; i < 10; i++) c.ws.send(frame(1, String(i)));
  await eventually(() => outcomes.length === 10);
  await sleep(30);
  const limited = c.messages.filter((m: any) => m.code === 'RATE_LIMITED');
  // Fixed one-second windows: a window may turn during the burst, so up to 6 may pass.
  assert.ok(handled >= 3 && handled <= 6, `handled ${handled}`);
  assert.equal(limited.length, 10 - handled);
  assert.ok(limited.every((m: any) => m.type === 'error' && !('ref' in m)));
  assert.equal(outcomes.filter((o) => o === 'k:RATE_LIMITED').length, 10 - handled);
  assert.equal(outcomes.filter((o) => o === 'k:OK').length, handled);
  c.ws.close();
  await srv.close();
});

test('binary events: codes are checked when the route is declared', () => {
  const handler = () => {};
  const declare = (events: Record<string, unknown>) => new App().ws('/x', { events } as WsBehavior<unknown, any>);
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ a: { binary: 0, handler } }, /ws \/x: event a: binary code must be an integer from 1 to 255, got 0/],
    [{ a: { binary: 256, handler } }, /from 1 to 255, got 256/],
    [{ a: { binary: 1.5, handler } }, /from 1 to 255, got 1.5/],
    [{ a: { binary: '1', handler } }, /event a: binary must be a code \(an integer from 1 to 255\) or \{ code, decode, encode \}/],
    [{ a: { binary: null, handler } }, /event a: binary must be a code/],
    [{ a: { binary: {}, handler } }, /binary code must be an integer from 1 to 255, got undefined/],
    [{ a: { binary: { code: 1, decode: 'utf8' }, handler } }, /event a: binary.decode must be a function/],
    [{ a: { binary: { code: 1, encode: 'u32' }, handler } }, /event a: binary.encode must be a function \(reply\) => Uint8Array/],
    [
      { a: { binary: { code: 1, decoder() {} }, handler } },
      /ws \/x: event a: binary: unknown option "decoder" \(did you mean "decode"\?\)/,
    ],
    [{ a: { binary: 7, handler }, b: { binary: { code: 7 }, handler } }, /event b: binary code 7 is already the code of event a/],
    [{ a: { binaryCode: 7, handler } }, /unknown option "binaryCode"/],
  ];
  for (const [events, message] of bad)
    assert.throws(
      () => declare(events),
      (err: unknown) => err instanceof TypeError && message.test(err.message),
    );
  // The same code on two routes is fine; so are 1 and 255.
  const app = new App();
  app.ws('/a', { events: { a: { binary: 1, handler }, b: { binary: 255, handler } } });
  app.ws('/b', { events: { a: { binary: 1, handler } } });
  const infos = app.routes().filter((r) => r.kind === 'ws');
  assert.deepEqual(
    infos.map((r) => r.events.map((e) => [e.name, e.binary])),
    [
      [
        ['a', 1],
        ['b', 255],
      ],
      [['a', 1]],
    ],
  );
});

describe('binary events with encode: answered in bytes', () => {
  let srv: Running;
  let url: string;
  const logger = recordingLogger();
  const reused = new Uint8Array(1024);
  before(async () => {
    const app = new App({ logger: logger.logger });
    app.ws('/live', {
      events: {
        // The typing race's acknowledgement: the code, then a u32 little-endian.
        keys: {
          binary: {
            code: 1,
            encode: (n: number) => new Uint8Array(new Uint32Array([n]).buffer),
          },
          schema: z.string().max(10),
          reply: z.number(),
          handler: (ws, text) => text.length,
        },
        slow: {
          binary: { code: 2, encode: (s: string) => utf8.encode(s) },
          reply: z.string(),
          handler: async (ws, text) => {
            await sleep(20);
            return `later ${String(text)}`;
          },
        },
        badEncode: {
          binary: {
            code: 3,
            encode: () => {
              throw new Error('cannot encode');
            },
          },
          handler: () => 1,
        },
        notBytes: { binary: { code: 4, encode: () => 'not bytes' as never }, handler: () => 1 },
        // An encoder that writes every answer into the same buffer: answers are copied at once.
        echo: {
          binary: { code: 6, encode: (s: string) => reused.subarray(0, utf8.encodeInto(s, reused).written) },
          schema: z.string(),
          reply: z.string(),
          handler: (ws, text) => text,
        },
        refused: {
          binary: { code: 5, encode: () => Uint8Array.of(1) },
          handler: () => {
            throw new Error('no');
          },
        },
      },
    });
    srv = await start(app);
    url = srv.url.replace('http', 'ws') + '/live';
  });
  after(() => srv.close());

  const bytes = (m: unknown) => (m instanceof ArrayBuffer ? [...new Uint8Array(m)] : m);

  test("a binary frame gets [code, ...encode(the handler's value)], in the order they came", async () => {
    const c = await openWs(url);
    c.ws.send(frame(1, 'abc'));
    c.ws.send(frame(1, 'abcdefghij'));
    assert.deepEqual(bytes(await c.next()), [1, 3, 0, 0, 0]);
    assert.deepEqual(bytes(await c.next()), [1, 10, 0, 0, 0]);
    c.ws.close();
  });

  test('answers of every size are whole and their own, from a reused encoder buffer too, sync and async interleaved', async () => {
    const c = await openWs(url);
    // Frames of 256 bytes (the largest assembled in the shared buffer) and 257 (a fresh one),
    // then shorter ones after longer ones: no byte of an earlier answer may show.
    const texts = ['a'.repeat(255), 'b'.repeat(256), 'c', 'dd', 'e'.repeat(600), 'f'];
    c.ws.send(frame(2, 'x')); // answered later, corked, between the others
    for (const t of texts) c.ws.send(frame(6, t));
    for (const t of texts) assert.deepEqual(bytes(await c.next()), [6, ...utf8.encode(t)]);
    c.ws.send(frame(1, 'abcd'));
    assert.deepEqual(bytes(await c.next()), [1, 4, 0, 0, 0]);
    assert.deepEqual(bytes(await c.next()), [2, ...utf8.encode('later x')]);
    c.ws.close();
  });

  test('an async handler is answered when it settles (corked, outside the uWS callback)', async () => {
    const c = await openWs(url);
    c.ws.send(frame(2, 'x'));
    assert.deepEqual(bytes(await c.next()), [2, ...utf8.encode('later x')]);
    c.ws.close();
  });

  test('JSON event frames of the same event are answered as always: a JSON reply with ref, nothing without', async () => {
    const c = await openWs(url);
    c.ws.send('{"type":"event","event":"keys","data":"json"}');
    c.ws.send('{"type":"event","event":"keys","data":"json!","ref":7}');
    assert.deepEqual(await c.next(), { type: 'reply', ref: 7, data: 5 });
    c.ws.send('{"type":"ping","ref":8}');
    assert.deepEqual(await c.next(), { type: 'pong', ref: 8 });
    assert.deepEqual(c.messages, []);
    c.ws.close();
  });

  test('failures: the error frame without ref, no bytes; an encode that throws or returns no Uint8Array is logged', async () => {
    const c = await openWs(url);
    c.ws.send(frame(1, 'far too long for the schema'));
    assert.equal((await c.next()).code, 'VALIDATION');
    c.ws.send(frame(5));
    assert.deepEqual(await c.next(), { type: 'error', code: 'HANDLER_ERROR', message: 'Internal error' });
    for (const code of [3, 4]) {
      c.ws.send(frame(code));
      assert.deepEqual(await c.next(), { type: 'error', code: 'HANDLER_ERROR', message: 'Internal error' });
    }
    const failed = logger.entries
      .filter((l) => l.msg === 'websocket event handler failed')
      .map((l) => String((l.obj as { err?: Error }).err?.message));
    assert.ok(failed.includes('cannot encode'), JSON.stringify(failed));
    assert.ok(
      failed.some((m) => /binary encode must return a Uint8Array, got string/.test(m)),
      JSON.stringify(failed),
    );
    // The socket lives on.
    c.ws.send(frame(1, 'ok'));
    assert.deepEqual(bytes(await c.next()), [1, 2, 0, 0, 0]);
    assert.equal(c.messages.filter((m) => m instanceof ArrayBuffer).length, 0);
    c.ws.close();
  });
});
