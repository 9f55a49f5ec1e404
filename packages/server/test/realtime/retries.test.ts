// Retried requests, run once: live.request(event, data, { retries }) resends after a reconnect
// with an idempotency key, and the route runs the handler once per key within its window
// (once.ts). Real server, real client; the connection is cut by the server between the request
// and its reply.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connect, type ClientError, type Live, type RequestOptions } from '../../../client/src/index.ts';
import { App, type Socket } from '../../src/index.ts';
import { eventually, openWs, recordingLogger, sleep, start, type Running } from '../helpers.ts';

/** A promise and its resolve, to hold a handler mid-flight. */
function gate<T>() {
  let open!: (v: T) => void;
  const done = new Promise<T>((r) => (open = r));
  return { done, open };
}

describe('retried requests, run once', () => {
  let running: Running;
  const log = recordingLogger();
  let runs = 0;
  let held: { done: Promise<number>; open: (v: number) => void } | undefined;
  let lastSocket: Socket<unknown> | undefined;
  let opens = 0;
  let fails = 0;
  let tiny = 0;

  before(async () => {
    const app = new App({ logger: log.logger });
    app.ws('/live', {
      open: (ws) => {
        opens++;
        lastSocket = ws;
      },
      events: {
        // Runs once per key: counts, then waits for the test to let it finish.
        pay: {
          handler: async (ws, data) => {
            runs++;
            lastSocket = ws;
            const g = gate<number>();
            held = g;
            return { paid: (data as { amount: number }).amount, receipt: await g.done };
          },
        },
        fail: {
          handler: () => {
            fails++;
            throw new Error('card declined');
          },
        },
      },
    });
    app.ws('/tiny', { idempotency: { window: 100, keys: 2 }, events: { count: { handler: () => ++tiny } } });
    running = await start(app);
  });
  after(() => running.close());

  const url = () => `ws://127.0.0.1:${running.port}`;

  /** A fresh client with one `pay` request in flight, its handler held; `body` cuts the socket and checks. */
  async function paying(
    amount: number,
    options: RequestOptions,
    body: (reply: Promise<unknown>, live: Live) => Promise<void>,
  ): Promise<void> {
    runs = 0;
    const live = connect(`${url()}/live`, { minDelay: 10, maxDelay: 50 });
    try {
      await live.ready;
      const reply = live.request('pay', { amount }, options);
      await eventually(() => runs === 1);
      await body(reply, live);
    } finally {
      live.close();
    }
  }
  /** Closes the server side of the current socket (4000: not terminal), waits for the reconnect and the resend. */
  async function cutAndReconnect(live: Live): Promise<void> {
    const before = opens;
    lastSocket!.close(4000, 'cut');
    await eventually(() => opens === before + 1);
    await live.ping(); // a barrier: the resend (queued first) has reached the server
  }

  test('the socket cut while the handler runs: the resend waits for it, the handler runs once', () =>
    paying(5, { retries: 2 }, async (reply, live) => {
      await cutAndReconnect(live);
      assert.equal(runs, 1, 'the resend did not run the handler again');
      held!.open(42);
      assert.deepEqual(await reply, { paid: 5, receipt: 42 });
      assert.equal(runs, 1);
    }));

  test('the socket cut after the handler finished: the resend gets the first result', () =>
    paying(7, { retries: 1 }, async (reply) => {
      lastSocket!.close(4000, 'cut');
      held!.open(1); // settles after the close: the first socket never sends it
      assert.deepEqual(await reply, { paid: 7, receipt: 1 });
      assert.equal(runs, 1);
    }));

  test('without retries the same cut rejects with CONNECTION_LOST (and the handler ran once)', () =>
    paying(1, {}, async (reply) => {
      lastSocket!.close(4000, 'cut');
      await assert.rejects(reply, (e: ClientError) => e.code === 'CONNECTION_LOST');
      held!.open(0);
    }));

  test('retries run out: a second cut rejects with CONNECTION_LOST, still one run', () =>
    paying(2, { retries: 1 }, async (reply, live) => {
      await cutAndReconnect(live);
      lastSocket!.close(4000, 'cut again');
      await assert.rejects(reply, (e: ClientError) => e.code === 'CONNECTION_LOST');
      held!.open(0);
      assert.equal(runs, 1);
    }));

  test('an error is the first outcome too: a resend gets it without running the handler', async () => {
    fails = 0;
    const { ws, next } = await openWs(`${url()}/live`);
    try {
      ws.send('{"type":"event","event":"fail","ref":1,"key":"k-fail-1"}');
      const a = await next((m) => m.ref === 1);
      ws.send('{"type":"event","event":"fail","ref":2,"key":"k-fail-1"}');
      const b = await next((m) => m.ref === 2);
      assert.equal(a.code, 'HANDLER_ERROR');
      assert.deepEqual({ ...b, ref: 1 }, a, 'the same answer, for the resend ref');
      assert.equal(fails, 1);
    } finally {
      ws.close();
    }
  });

  test('bad keys are refused with BAD_FRAME and a log line; nothing runs, the socket stays usable', async () => {
    tiny = 0;
    const { ws, next } = await openWs(`${url()}/tiny`);
    try {
      const bad = [
        '{"type":"event","event":"count","ref":1,"key":123}',
        '{"type":"event","event":"count","ref":2,"key":""}',
        `{"type":"event","event":"count","ref":3,"key":"${'k'.repeat(129)}"}`,
        '{"type":"event","event":"count","ref":4,"key":"a\\"b"}',
        '{"type":"event","event":"count","ref":5,"key":"a b"}',
        '{"type":"event","event":"count","ref":6,"key":null}',
      ];
      for (const [i, frame] of bad.entries()) {
        ws.send(frame);
        const m = await next((x) => x.ref === i + 1);
        assert.equal(m.type, 'error', frame);
        assert.equal(m.code, 'BAD_FRAME');
        assert.match(m.message, /key must be/);
      }
      ws.send('{"type":"event","event":"count","key":"no-ref"}');
      const noRef = await next((x) => x.type === 'error' && x.ref === undefined);
      assert.match(noRef.message, /with a ref/);
      assert.equal(tiny, 0, 'no handler ran');
      assert.ok(log.entries.some((e) => e.level === 'warn' && /bad idempotency key/.test(e.msg ?? '')));
      ws.send('{"type":"event","event":"count","ref":9,"key":"fine"}');
      assert.deepEqual(await next((x) => x.ref === 9), { type: 'reply', ref: 9, data: 1 });
    } finally {
      ws.close();
    }
  });

  test('the window: a key is remembered for `window` ms, then runs again; past `keys` the oldest is forgotten', async () => {
    tiny = 0;
    const { ws, next } = await openWs(`${url()}/tiny`);
    let ref = 0;
    const count = async (key: string) => {
      const r = ++ref;
      ws.send(`{"type":"event","event":"count","ref":${r},"key":"${key}"}`);
      return (await next((x) => x.ref === r)).data as number;
    };
    try {
      assert.equal(await count('a'), 1);
      assert.equal(await count('a'), 1, 'within the window: the first result');
      await sleep(250); // window: 100 ms (generous margin for slow CI)
      assert.equal(await count('a'), 2, 'past the window: runs again');
      assert.equal(await count('b'), 3);
      assert.equal(await count('c'), 4, 'keys: 2, so "a" (the oldest) is forgotten');
      assert.equal(await count('c'), 4);
      assert.equal(await count('a'), 5, 'forgotten: runs again');
    } finally {
      ws.close();
    }
  });

  test('bad idempotency options are refused when the route is declared', () => {
    const app = new App();
    assert.throws(() => app.ws('/a', { idempotency: { window: 0 } }), /idempotency\.window/);
    assert.throws(() => app.ws('/b', { idempotency: { keys: 1.5 } }), /idempotency\.keys/);
    assert.throws(() => app.ws('/c', { idempotency: 5 as never }), /idempotency must be/);
  });
});
