// Frames the server does not read are never dropped in silence: on a route without `message`
// a frame that is not a protocol frame gets a BAD_FRAME error (and a debug log line); an event
// sent without `ref` that fails gets its error frame, without `ref` (docs/protocol.md).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { App } from '../../src/index.ts';
import { eventually, openWs, recordingLogger, start, type Running } from '../helpers.ts';

describe('frames nothing on the route reads', () => {
  let srv: Running;
  const log = recordingLogger();
  const received: [string, boolean][] = [];
  before(async () => {
    const app = new App({ logger: log.logger });
    const events = {
      send: { schema: z.object({ text: z.string().max(5) }), handler: (_ws: unknown, m: { text: string }) => ({ echoed: m.text }) },
      boom: {
        handler() {
          throw new Error('exploded');
        },
      },
    };
    app.ws('/plain', { events });
    app.ws('/raw', { events, message: (_ws, data, isBinary) => void received.push([Buffer.from(data).toString(), isBinary]) });
    srv = await start(app);
  });
  after(() => srv.close());

  const wsUrl = (path: string) => `ws://127.0.0.1:${srv.port}${path}`;
  const NOT_PROTOCOL = {
    type: 'error',
    code: 'BAD_FRAME',
    message: 'Not a protocol frame (those start with {"type":"), and this route has no message handler',
  };

  for (const [name, frame] of [
    ['malformed JSON', 'not json{'],
    ['a JSON array', '[1,2,3]'],
    ['an event without type', '{"event":"send","data":{"text":"hi"},"ref":1}'],
    ['a spaced {"type": …}', '{ "type": "ping", "ref": 2 }'],
    ['an empty text frame', ''],
  ] as const) {
    test(`${name}: BAD_FRAME without ref, and a debug line`, async () => {
      const c = await openWs(wsUrl('/plain'));
      const before = log.entries.length;
      c.ws.send(frame);
      assert.deepEqual(await c.next((m) => m.type === 'error'), NOT_PROTOCOL);
      const line = log.entries.slice(before).find((e) => e.level === 'debug')!;
      assert.equal(line.msg, 'websocket: not a protocol frame, and the route has no message handler');
      assert.deepEqual({ ...(line.obj as object), ip: undefined }, { ip: undefined, binary: false, size: Buffer.byteLength(frame) });
      // The socket stays open and keeps working.
      c.ws.send('{"type":"ping","ref":9}');
      assert.deepEqual(await c.next((m) => m.type === 'pong'), { type: 'pong', ref: 9 });
      c.ws.close();
    });
  }

  test('a binary frame: BAD_FRAME without ref', async () => {
    const c = await openWs(wsUrl('/plain'));
    c.ws.send(new Uint8Array([0x7b, 0x22, 0x74, 0x79, 0x70, 0x65, 0x22, 0x3a, 0x22])); // `{"type":"` as bytes is still binary
    assert.deepEqual(await c.next((m) => m.type === 'error'), {
      type: 'error',
      code: 'BAD_FRAME',
      message: 'Binary frame, and this route has no message handler',
    });
    await eventually(() => log.entries.some((e) => e.level === 'debug' && (e.obj as { binary?: boolean }).binary === true));
    c.ws.close();
  });

  test('a route with `message` gets those frames, and the client gets no error', async () => {
    const c = await openWs(wsUrl('/raw'));
    c.ws.send('not json{');
    c.ws.send('[1,2,3]');
    c.ws.send(new Uint8Array([1, 2, 3]));
    c.ws.send('{"type":"ping","ref":3}');
    await eventually(() => c.messages.length > 0);
    await eventually(() => received.length === 3);
    assert.deepEqual(received, [
      ['not json{', false],
      ['[1,2,3]', false],
      ['\x01\x02\x03', true],
    ]);
    assert.deepEqual(c.messages, [{ type: 'pong', ref: 3 }]);
    c.ws.close();
  });

  test('an event without ref: no reply when it succeeds, an error frame without ref when it fails', async () => {
    const c = await openWs(wsUrl('/plain'));
    c.ws.send('{"type":"event","event":"send","data":{"text":"ok"}}');
    c.ws.send('{"type":"event","event":"send","data":{"text":"far too long"}}');
    c.ws.send('{"type":"event","event":"nope"}');
    c.ws.send('{"type":"event","event":"boom"}');
    c.ws.send('{"type":"ping","ref":4}');
    await eventually(() => c.messages.some((m) => (m as { type?: string }).type === 'pong'));
    const [validation, unknown, failed, pong] = c.messages as Record<string, unknown>[];
    assert.equal(c.messages.length, 4, 'the successful event got no reply');
    assert.deepEqual(
      { ...validation, issues: undefined },
      { type: 'error', code: 'VALIDATION', message: 'Invalid event data', issues: undefined },
    );
    assert.ok(Array.isArray(validation!.issues) && !('ref' in validation!));
    assert.deepEqual(unknown, { type: 'error', code: 'UNKNOWN_EVENT', message: 'Unknown event "nope"' });
    assert.deepEqual(failed, { type: 'error', code: 'HANDLER_ERROR', message: 'Internal error' });
    assert.deepEqual(pong, { type: 'pong', ref: 4 });
    c.ws.close();
  });
});
