// coalescePublishes: { tick }: what a tick adds to per-iteration coalescing (ws-coalesce.test.ts
// runs ordering, volatile and shutdown in both modes): publishes of several loop turns leave as
// one frame per topic, held about one tick and never much longer; the option's bad values.
// Timing margins are wide: CI runs this under coverage on two slow cores.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { App } from '../../src/index.ts';
import { eventually, sleep, start, subscribedWs, type Running } from '../helpers.ts';

const ev = (topic: string, data: unknown) => ({ topic, event: 'e', data });
const TICK = 300;

function tickApp(tick: number): App {
  const app = new App({ coalescePublishes: { tick } });
  app.ws('/live', {
    events: {
      // Publishes over several loop turns (a timer, an immediate, a microtask), on two topics.
      spread: {
        handler() {
          app.publish('t', 'e', 1);
          queueMicrotask(() => app.publish('t', 'e', 2));
          setImmediate(() => app.publish('u', 'e', 'x'));
          setTimeout(() => {
            app.publish('t', 'e', 3);
            app.publish('u', 'e', 'y');
          }, 20);
        },
      },
      one: {
        handler() {
          app.publish('t', 'e', 'alone');
        },
      },
      // Two topics first held 150 ms apart.
      apart: {
        handler() {
          app.publish('t', 'e', 'first');
          setTimeout(() => app.publish('u', 'e', 'second'), 150);
        },
      },
    },
  });
  return app;
}

describe('coalescePublishes: { tick }', () => {
  let srv: Running;
  let url: string;
  before(async () => {
    srv = await start(tickApp(TICK));
    url = srv.url.replace('http', 'ws') + '/live';
  });
  after(() => srv.close());

  test('publishes from different loop turns leave as one frame per topic', async () => {
    const a = await subscribedWs(url, 't', 'u');
    const sender = await subscribedWs(url);
    sender.ws.send('{"type":"event","event":"spread"}');
    await eventually(() => a.messages.length >= 2, TICK + 2000);
    await sleep(50);
    const byTopic = new Map(a.messages.map((m: any) => [m[0].topic, m]));
    assert.equal(a.messages.length, 2, 'one frame per topic');
    assert.deepEqual(byTopic.get('t'), [ev('t', 1), ev('t', 2), ev('t', 3)]);
    assert.deepEqual(byTopic.get('u'), [ev('u', 'x'), ev('u', 'y')]);
    a.ws.close();
    sender.ws.close();
  });

  test('a publish is held about one tick, never much longer', async () => {
    const a = await subscribedWs(url, 't');
    const sender = await subscribedWs(url);
    for (let i = 0; i < 3; i++) {
      const sent = performance.now();
      sender.ws.send('{"type":"event","event":"one"}');
      assert.deepEqual(await a.next(() => true, TICK + 3000), ev('t', 'alone'));
      const held = performance.now() - sent;
      // Held: not sent at the end of the loop turn. Bounded: the tick plus a slow machine's delays.
      assert.ok(held >= TICK - 30, `held ${held.toFixed(0)} ms, tick ${TICK} ms`);
      assert.ok(held < TICK + 1000, `held ${held.toFixed(0)} ms, tick ${TICK} ms`);
    }
    a.ws.close();
    sender.ws.close();
  });

  test("each topic leaves a tick after its own first publish, not at another topic's", async () => {
    const a = await subscribedWs(url, 't', 'u');
    const sender = await subscribedWs(url);
    const sent = performance.now();
    sender.ws.send('{"type":"event","event":"apart"}');
    assert.deepEqual(await a.next((m) => m.topic === 't', TICK + 3000), ev('t', 'first'));
    const t = performance.now() - sent;
    assert.deepEqual(await a.next((m) => m.topic === 'u', TICK + 3000), ev('u', 'second'));
    const u = performance.now() - sent;
    // One shared tick would send both at t (u held 150 ms only); its own deadline sends u at
    // 150 + TICK or later. Lower bounds only: a late timer on a slow machine cannot break them.
    assert.ok(u > t, `t after ${t.toFixed(0)} ms, u after ${u.toFixed(0)} ms`);
    assert.ok(u >= 150 + TICK - 30, `t after ${t.toFixed(0)} ms, u after ${u.toFixed(0)} ms: u held less than its own tick`);
    a.ws.close();
    sender.ws.close();
  });

  test('a topic sent early (a subscribe) and held again keeps its own deadline; the others keep theirs', async () => {
    const a = await subscribedWs(url, 't', 'u');
    const sender = await subscribedWs(url);
    const sent = performance.now();
    sender.ws.send('{"type":"event","event":"apart"}');
    // A subscribe to t sends its batch at once (nothing reordered), then t is held afresh.
    await sleep(50);
    const late = await subscribedWs(url, 't');
    assert.deepEqual(await a.next((m) => m.topic === 't', 1000), ev('t', 'first'));
    assert.ok(performance.now() - sent < TICK - 50, 'sent early by the subscribe');
    sender.ws.send('{"type":"event","event":"one"}');
    const again = performance.now();
    assert.deepEqual(await late.next((m) => m.topic === 't', TICK + 3000), ev('t', 'alone'));
    assert.ok(performance.now() - again >= TICK - 30, 'held a whole tick again');
    assert.deepEqual(await a.next((m) => m.topic === 'u', TICK + 3000), ev('u', 'second'));
    a.ws.close();
    late.ws.close();
    sender.ws.close();
  });
});

test('coalescePublishes: bad values are refused, naming the option', () => {
  for (const bad of [{ tick: 0 }, { tick: 1001 }, { tick: 1.5 }, { tick: '30' }, { tick: Number.NaN }, {}, 30, 'yes', null, []]) {
    assert.throws(
      () => new App({ coalescePublishes: bad as never }),
      (err: unknown) => err instanceof TypeError && /^coalescePublishes must be true, false or \{ tick: ms \}/.test(err.message),
      JSON.stringify(bad),
    );
  }
  assert.throws(() => new App({ coalescePublishes: { tick: 30, tock: 1 } as never }), /coalescePublishes: unknown option "tock"/);
  for (const good of [true, false, { tick: 1 }, { tick: 1000 }]) new App({ coalescePublishes: good });
});
