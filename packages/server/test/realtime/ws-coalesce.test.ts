// coalescePublishes: the events published to a topic within one event-loop iteration (`true`)
// or one tick (`{ tick }`) leave as one array frame, in order, without reordering or
// misdelivering anything. Each behaviour is tested in both modes; the tick's own properties
// (several loop turns in one frame, how long a publish is held) are in ws-tick.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { App } from '../../src/index.ts';
import { eventually, sleep, start, subscribedWs, type Running } from '../helpers.ts';

const ev = (topic: string, data: unknown) => ({ topic, event: 'e', data });

type Mode = boolean | { tick: number };

function burstApp(coalescePublishes: Mode): App {
  const app = new App({ coalescePublishes });
  app.ws('/live', {
    events: {
      // n events to topic t, then two to topic u, all in one callback.
      burst: {
        schema: z.number().int().min(1).max(100),
        handler(ws, n) {
          for (let i = 0; i < n; i++) app.publish('t', 'e', i);
          app.publish('u', 'e', 'x');
          app.publish('u', 'e', 'y');
        },
      },
      // Raw publishes and a socket's publish come after what was queued before them.
      mixed: {
        handler(ws) {
          app.publish('t', 'e', 1);
          app.publish('t', 'e', 2);
          app.publishRaw('t', 'raw');
          app.publish('t', 'e', 3);
          ws.publish('t', 'e', 'from-socket');
          app.publish('t', 'e', 4);
        },
      },
      // The sender subscribes between two publishes: it gets only the second one.
      joinLate: {
        handler(ws) {
          app.publish('t', 'e', 'before');
          ws.subscribe('t');
          app.publish('t', 'e', 'after');
        },
      },
      // The sender leaves between two publishes: it still gets the first one.
      leaveEarly: {
        handler(ws) {
          app.publish('t', 'e', 'kept');
          ws.unsubscribe('t');
          app.publish('t', 'e', 'gone');
        },
      },
      // A volatile publish is never held: the topic's held envelopes go first.
      volatileBetween: {
        handler() {
          app.publish('t', 'e', 1);
          app.publish('t', 'e', 2, { volatile: true });
          app.publish('t', 'e', 3);
        },
      },
      publishThenClose: {
        handler() {
          app.publish('t', 'e', 'last-1');
          app.publish('t', 'e', 'last-2');
          void srvRef.close();
        },
      },
    },
  });
  return app;
}
let srvRef: Running;

// The tick is short enough for the sleeps below to see its frame (the tick test file uses longer ones).
for (const mode of [true, { tick: 20 }] satisfies Mode[])
  describe(`coalescePublishes: ${JSON.stringify(mode)}`, () => {
    let srv: Running;
    let url: string;
    before(async () => {
      srv = await start(burstApp(mode));
      url = srv.url.replace('http', 'ws') + '/live';
    });
    after(() => srv.close());

    test('one iteration of publishes → one array frame per topic, in publish order', async () => {
      const a = await subscribedWs(url, 't', 'u');
      const sender = await subscribedWs(url);
      sender.ws.send('{"type":"event","event":"burst","data":5}');
      const t = await a.next((m) => Array.isArray(m) && m[0].topic === 't');
      assert.deepEqual(
        t,
        [0, 1, 2, 3, 4].map((i) => ev('t', i)),
      );
      const u = await a.next((m) => Array.isArray(m) && m[0].topic === 'u');
      assert.deepEqual(u, [ev('u', 'x'), ev('u', 'y')]);
      await sleep(30);
      assert.equal(a.messages.length, 0, 'no frame beyond the two batches');
      // A lone publish is still a plain object frame.
      sender.ws.send('{"type":"event","event":"burst","data":1}');
      assert.deepEqual(await a.next((m) => !Array.isArray(m) && m.topic === 't'), ev('t', 0));
      a.ws.close();
      sender.ws.close();
    });

    test('raw publishes and socket publishes keep the topic order', async () => {
      const a = await subscribedWs(url, 't');
      const sender = await subscribedWs(url, 't');
      sender.ws.send('{"type":"event","event":"mixed"}');
      await eventually(() => a.messages.length >= 4);
      await sleep(30);
      assert.deepEqual(a.messages, [[ev('t', 1), ev('t', 2)], 'raw', ev('t', 3), ev('t', 'from-socket'), ev('t', 4)]);
      // The sender is excluded from its own socket publish only.
      await eventually(() => sender.messages.length >= 4);
      await sleep(30);
      assert.deepEqual(
        sender.messages.filter((m: any) => m.type === undefined),
        [[ev('t', 1), ev('t', 2)], 'raw', ev('t', 3), ev('t', 4)],
      );
      a.ws.close();
      sender.ws.close();
    });

    test('subscribe and unsubscribe between publishes: nothing early, nothing lost', async () => {
      const a = await subscribedWs(url, 't');
      const late = await subscribedWs(url);
      late.ws.send('{"type":"event","event":"joinLate"}');
      assert.deepEqual(await late.next((m) => m.topic === 't'), ev('t', 'after'));
      await sleep(30);
      assert.equal(late.messages.length, 0, 'the event published before subscribe() did not reach the late subscriber');
      assert.deepEqual(a.messages.splice(0), [ev('t', 'before'), ev('t', 'after')]);

      late.ws.send('{"type":"event","event":"leaveEarly"}');
      assert.deepEqual(await late.next((m) => m.topic === 't'), ev('t', 'kept'));
      await sleep(30);
      assert.equal(late.messages.length, 0, 'nothing after unsubscribe()');
      assert.deepEqual(a.messages.splice(0), [ev('t', 'kept'), ev('t', 'gone')]);
      a.ws.close();
      late.ws.close();
    });

    test('a volatile publish sends the held envelopes first', async () => {
      const a = await subscribedWs(url, 't');
      const sender = await subscribedWs(url);
      sender.ws.send('{"type":"event","event":"volatileBetween"}');
      await eventually(() => a.messages.length >= 3);
      await sleep(30);
      assert.deepEqual(a.messages, [ev('t', 1), ev('t', 2), ev('t', 3)]);
      a.ws.close();
      sender.ws.close();
    });
  });

// A long tick: close() must not wait for it, nor lose what it holds.
for (const mode of [true, { tick: 1000 }] satisfies Mode[])
  test(`coalescePublishes ${JSON.stringify(mode)}: queued events still go out when the server shuts down`, async () => {
    srvRef = await start(burstApp(mode));
    const url = srvRef.url.replace('http', 'ws') + '/live';
    const a = await subscribedWs(url, 't');
    const sender = await subscribedWs(url);
    sender.ws.send('{"type":"event","event":"publishThenClose"}');
    const { code } = await a.closed;
    assert.equal(code, 1001);
    assert.deepEqual(a.messages, [[ev('t', 'last-1'), ev('t', 'last-2')]]);
  });

test('without coalescePublishes every publish is its own frame', async () => {
  const srv = await start(burstApp(false));
  const url = srv.url.replace('http', 'ws') + '/live';
  const a = await subscribedWs(url, 't', 'u');
  const sender = await subscribedWs(url);
  sender.ws.send('{"type":"event","event":"burst","data":3}');
  await eventually(() => a.messages.length >= 5);
  await sleep(30);
  assert.deepEqual(a.messages, [ev('t', 0), ev('t', 1), ev('t', 2), ev('u', 'x'), ev('u', 'y')]);
  a.ws.close();
  sender.ws.close();
  await srv.close();
});
