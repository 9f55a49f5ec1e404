// The event frame's short read (src/realtime/event-frame.ts) must answer exactly what parsing
// the whole frame answers, or step aside (null) so that the whole frame is parsed. Checked
// against JSON.parse on frames written by hand to break it and on random ones; the same
// frames over a real socket are in the second half.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { App } from '../../src/index.ts';
import { readEventFrame } from '../../src/realtime/event-frame.ts';
import { readRef } from '../../src/realtime/protocol.ts';
import { openWs, start, type Running } from '../helpers.ts';

/** What the control handler reads from the whole frame: its event's members, or why it has none. */
function byWholeParse(text: string): { event: unknown; data: unknown; ref: number | undefined; key: unknown } | 'malformed' | 'other' {
  let f: Record<string, unknown>;
  try {
    f = JSON.parse(text);
  } catch {
    return 'malformed';
  }
  if (typeof f !== 'object' || f === null || f.type !== 'event') return 'other';
  return { event: f.event, data: f.data, ref: readRef(f.ref), key: f.key };
}

/** The short read agrees with the whole parse whenever it answers; `expectShort` says whether it must answer. */
function check(text: string, expectShort?: boolean): void {
  const short = readEventFrame(text);
  const whole = byWholeParse(text);
  if (short === null) {
    if (expectShort === true) assert.fail(`expected the short read to answer ${text}`);
    return;
  }
  if (expectShort === false) assert.fail(`expected the short read to step aside for ${text}`);
  assert.notEqual(typeof whole, 'string', `the short read answered a frame the whole parse reads as ${String(whole)}: ${text}`);
  assert.deepEqual({ event: short.event, data: short.data, ref: short.ref, key: short.key }, whole, text);
}

describe('readEventFrame', () => {
  test('reads the frames the client writes', () => {
    for (const data of [
      undefined,
      'a',
      '"',
      0,
      -1.5e3,
      true,
      null,
      [],
      {},
      [1, [2, { a: 'b' }]],
      { s: 1, n: 2, p: 'x'.repeat(64) },
      'é€😀',
    ]) {
      check(JSON.stringify({ type: 'event', event: 'chat:send', data }), true);
      check(JSON.stringify({ type: 'event', event: 'chat:send', data, ref: 7 }), true);
      // a retried request (@tachyon/client's `retries`): the key after the ref
      check(JSON.stringify({ type: 'event', event: 'chat:send', data, ref: 7, key: '12-34.7' }), true);
    }
    const f = readEventFrame('{"type":"event","event":"pvp:keystrokes","data":"a","ref":0}')!;
    assert.deepEqual({ ...f }, { event: 'pvp:keystrokes', data: 'a', ref: 0, key: undefined });
    const none = { data: undefined, ref: undefined, key: undefined };
    assert.deepEqual({ ...readEventFrame('{"type":"event","event":"tick"}')! }, { ...none, event: 'tick' });
    assert.deepEqual({ ...readEventFrame('{"type":"event","event":"","data":1}')! }, { ...none, event: '', data: 1 });
    assert.deepEqual(
      { ...readEventFrame('{"type":"event","event":"a","data":"k","key":""}')! },
      { ...none, event: 'a', data: 'k', key: '' },
    );
  });

  test('steps aside for every frame the whole parse reads differently or refuses', () => {
    for (const text of [
      // a repeated key: JSON.parse keeps the last one
      '{"type":"event","event":"a","data":1,"event":"b"}',
      '{"type":"event","event":"a","data":{},"type":"ping"}',
      '{"type":"event","event":"a","data":1,"data":2}',
      '{"type":"event","event":"a","data":1,"ref":2,"ref":3}',
      // keys in another order
      '{"type":"event","event":"a","data":1,"key":"k.2","ref":2}',
      '{"type":"event","event":"a","ref":2,"data":1}',
      '{"type":"event","data":1,"event":"a"}',
      // escapes and control characters in the name
      '{"type":"event","event":"a\\"b","data":1}',
      '{"type":"event","event":"a\\u0062","data":1}',
      '{"type":"event","event":"a\tb","data":1}',
      // keys that are not plain strings
      '{"type":"event","event":"a","data":1,"ref":2,"key":"k\\"}',
      '{"type":"event","event":"a","data":1,"ref":2,"key":"k\\"x"}',
      '{"type":"event","event":"a","data":1,"ref":2,"key":"k\nx"}',
      '{"type":"event","event":"a","data":1,"ref":2,"key":7}',
      '{"type":"event","event":"a","data":1,"ref":2,"key":"a","key":"b"}',
      // whitespace between the fixed tokens
      '{"type":"event","event":"a", "data":1}',
      '{"type":"event","event":"a","data":1} ',
      '{"type":"event","event":"a" }',
      // refs JSON refuses or that are not exact
      '{"type":"event","event":"a","data":1,"ref":012}',
      '{"type":"event","event":"a","data":1,"ref":1234567890123456}',
      // malformed
      '{"type":"event","event":"a","data":}',
      '{"type":"event","event":"a","data":1,"ref":}',
      '{"type":"event","event":"a","data":{"ref":1}',
      '{"type":"event","event":"a","data":"x,"ref":12}',
      '{"type":"event","event":"a","data":[1,2}',
      '{"type":"event","event":"a',
      '{"type":"event","event":"a"',
      '{"type":"event","event":"}',
      '{"type":"ping","ref":1}',
    ])
      check(text, false);
  });

  test('agrees with the whole parse on random frames', () => {
    // A small deterministic generator (no dependency): frames built from pieces that are
    // each valid, invalid, or valid in another place.
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const pick = <T>(xs: readonly T[]) => xs[rnd(xs.length)]!;
    const names = ['a', 'chat:send', '', 'é', 'a\\"', 'x\\n', 'a b', '\u0001', 'ref', 'data'];
    const values = [
      '1',
      '-0',
      '01',
      '1e5',
      '"s"',
      '"a\\"b"',
      '"x,\\"ref\\":3}"',
      '{}',
      '{"ref":1}',
      '[1,"]"]',
      'null',
      'tru',
      '',
      ' 2 ',
      '{"a":1,"a":2}',
      '"\\u00e9"',
    ];
    const tails = [
      '',
      ',"ref":1',
      ',"ref":0',
      ',"ref":00',
      ',"ref":-1',
      ',"ref":1.5',
      ',"ref":99',
      ',"key":"k"',
      ',"ref":3,"key":"k.3"',
      ',"ref":3,"key":"a\\"b"',
      ',"key":"k","ref":3',
      ',"event":"z"',
      ',"ref":1,"ref":2',
      ' ',
    ];
    let answered = 0;
    for (let i = 0; i < 20_000; i++) {
      const name = pick(names);
      const value = pick(values);
      const text =
        rnd(8) === 0
          ? `{"type":"event","event":"${name}"${pick(tails)}}`
          : `{"type":"event","event":"${name}","data":${value}${pick(tails)}}${rnd(10) === 0 ? pick(['}', ' ', '"']) : ''}`;
      check(text);
      if (readEventFrame(text) !== null) answered++;
    }
    assert.ok(answered > 2000, `the short read answered only ${answered} of 20,000 frames`);
  });
});

describe('event frames over a socket', () => {
  let srv: Running;
  const seen: [string, unknown][] = [];
  before(async () => {
    const app = new App();
    app.ws('/ws', {
      events: {
        a: { handler: (_ws, data) => void seen.push(['a', data]) },
        b: { handler: (_ws, data) => (seen.push(['b', data]), { got: data }) },
      },
    });
    srv = await start(app);
  });
  after(() => srv.close());

  test('each frame reaches the handler the whole parse names, with its data and ref', async () => {
    const c = await openWs(`ws://127.0.0.1:${srv.port}/ws`);
    c.ws.send('{"type":"event","event":"b","data":{"n":1},"ref":5}');
    assert.deepEqual(await c.next((m) => m.type === 'reply'), { type: 'reply', ref: 5, data: { got: { n: 1 } } });
    // The repeated key: the last `event` wins, as in JSON.parse.
    c.ws.send('{"type":"event","event":"a","data":2,"event":"b","ref":6}');
    assert.deepEqual(await c.next((m) => m.type === 'reply'), { type: 'reply', ref: 6, data: { got: 2 } });
    c.ws.send('{"type":"event","event":"a","data":"x"}');
    c.ws.send('{"type":"event","event":"a"}');
    c.ws.send('{"type":"ping","ref":7}');
    await c.next((m) => m.type === 'pong');
    assert.deepEqual(seen, [
      ['b', { n: 1 }],
      ['b', 2],
      ['a', 'x'],
      ['a', undefined],
    ]);
    c.ws.close();
  });

  test('a keyed request runs once, its resend gets the same reply, and a bad key is refused', async () => {
    const c = await openWs(`ws://127.0.0.1:${srv.port}/ws`);
    seen.length = 0;
    c.ws.send('{"type":"event","event":"b","data":3,"ref":8,"key":"k-1.8"}');
    assert.deepEqual(await c.next((m) => m.type === 'reply'), { type: 'reply', ref: 8, data: { got: 3 } });
    c.ws.send('{"type":"event","event":"b","data":3,"ref":9,"key":"k-1.8"}');
    assert.deepEqual(await c.next((m) => m.type === 'reply'), { type: 'reply', ref: 9, data: { got: 3 } });
    assert.deepEqual(seen, [['b', 3]], 'the resend did not run the handler again');
    // A key without a ref: the whole parse and the short read both hand it to the key window, which refuses it.
    c.ws.send('{"type":"event","event":"b","data":3,"key":"k-2"}');
    const refused = await c.next((m) => m.type === 'error');
    assert.equal(refused.code, 'BAD_FRAME');
    c.ws.close();
  });

  test('a malformed event frame still gets BAD_FRAME, and a ref with a leading zero is malformed', async () => {
    const c = await openWs(`ws://127.0.0.1:${srv.port}/ws`);
    for (const frame of ['{"type":"event","event":"a","data":}', '{"type":"event","event":"b","data":1,"ref":05}']) {
      c.ws.send(frame);
      assert.deepEqual(await c.next((m) => m.type === 'error'), { type: 'error', code: 'BAD_FRAME', message: 'Malformed JSON' });
    }
    c.ws.close();
  });
});
