// Volatile messages: `ws.send(event, data, { volatile: true })` and `app.publish(…, { volatile: true })`
// are dropped, never queued, for a socket with bytes waiting in its send buffer; ordinary
// messages are never dropped because of them. Real server, real sockets: the slow consumer is
// a raw TCP WebSocket that stops reading.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connect } from '../../../client/src/index.ts';
import { App, type Socket } from '../../src/index.ts';
import { eventually, rawWebSocket, sleep, start } from '../helpers.ts';

test('a consumer that does not read: 100 000 volatile messages leave the buffer bounded; ordinary ones all arrive, in order', async (t) => {
  const app = new App();
  let sock: Socket<unknown> | undefined;
  // A large maxBackpressure: the ordinary messages must never be dropped by the limit either.
  app.ws('/feed', { open: (ws) => ((sock = ws), void ws.subscribe('cursors')), maxBackpressure: 64 * 1024 * 1024, backpressure: 'drop' });
  const srv = await start(app);
  try {
    const raw = await rawWebSocket(srv.port, '/feed');
    raw.pause(); // stops reading: kernel buffers fill, then uWS's
    await eventually(() => sock !== undefined);
    const s = sock!;
    const cursor = { x: 0, y: 0, pad: 'c'.repeat(200) };
    const results = { sent: 0, backpressure: 0, dropped: 0, closed: 0 };
    let published = 0;
    let ordinary = 0;
    let maxBuffered = 0;
    let ordinaryBytes = 0;
    for (let i = 0; i < 100_000; i++) {
      cursor.x = i;
      results[s.send('cursor', cursor, { volatile: true })]++;
      if (app.publish('cursors', 'move', cursor, { volatile: true })) published++;
      if (i % 100 === 0) {
        const r = s.send('chat', { n: ordinary++ });
        assert.notEqual(r, 'dropped');
        ordinaryBytes += `{"event":"chat","data":{"n":${ordinary - 1}}}`.length + 2;
      }
      maxBuffered = Math.max(maxBuffered, s.bufferedAmount);
      if (i % 1000 === 0) await sleep(0);
    }
    t.diagnostic(
      `volatile sends ${JSON.stringify(results)}, volatile publishes delivered ${published}/100000, ordinary ${ordinary} (${ordinaryBytes} B), max buffered ${maxBuffered} B`,
    );
    // How many get through depends on the kernel's socket buffers (about 8 000 of each here).
    assert.ok(results.dropped > 0, `volatile sends were dropped: ${JSON.stringify(results)}`);
    assert.ok(published < 100_000, `volatile publishes were dropped: ${published} delivered`);
    // What is queued is the ordinary messages plus at most one volatile message cut short by the kernel.
    assert.ok(maxBuffered <= ordinaryBytes + 2 * 300, `buffer bounded: ${maxBuffered} bytes (ordinary messages: ${ordinaryBytes})`);
    assert.ok(maxBuffered < 64 * 1024, `buffer bounded: ${maxBuffered}`);
    // Reading again: every ordinary message arrives, in order.
    raw.resume();
    const chats = () => raw.frames.filter((f) => f.opcode === 1 && f.payload.toString().startsWith('{"event":"chat"'));
    await eventually(() => chats().length === ordinary, 10_000);
    assert.deepEqual(
      chats().map((f) => JSON.parse(f.payload.toString()).data.n),
      Array.from({ length: ordinary }, (_, i) => i),
    );
    // And volatile messages flow again once the buffer is empty.
    await eventually(() => s.bufferedAmount === 0, 5000);
    assert.equal(s.send('cursor', cursor, { volatile: true }), 'sent');
    raw.destroy();
  } finally {
    await srv.close();
  }
});

test('volatile messages reach readers that keep up; the index follows subscribe, unsubscribe and close', async () => {
  const app = new App();
  app.ws('/live', {});
  const srv = await start(app);
  const url = `ws://127.0.0.1:${srv.port}/live`;
  const early = connect(url);
  const late = connect(url);
  try {
    const got = { early: [] as number[], late: [] as number[] };
    // Subscribed before the first volatile publish builds the index.
    early.on('cursors', 'move', (n) => got.early.push(n as number));
    await early.ready;
    await early.ping();
    assert.equal(app.publish('cursors', 'move', 1, { volatile: true }), true);
    // Subscribed after: the index keeps up.
    const offLate = late.on('cursors', 'move', (n) => got.late.push(n as number));
    await late.ready;
    await late.ping();
    for (let n = 2; n <= 50; n++) app.publish('cursors', 'move', n, { volatile: true });
    await eventually(() => got.early.length === 50 && got.late.length === 49);
    offLate();
    await late.ping();
    app.publish('cursors', 'move', 51, { volatile: true });
    await eventually(() => got.early.length === 51);
    early.close();
    await eventually(() => app.subscribers('cursors') === 0);
    assert.equal(app.publish('cursors', 'move', 52, { volatile: true }), false, 'nobody left');
    await sleep(30);
    assert.deepEqual(
      got.early,
      Array.from({ length: 51 }, (_, i) => i + 1),
    );
    assert.equal(got.late.length, 49);
    assert.equal(app.publish('nobody:here', 'move', 1, { volatile: true }), false);
  } finally {
    early.close();
    late.close();
    await srv.close();
  }
});

test('volatile publishes keep the topic order with coalescePublishes; history topics refuse them', async () => {
  const app = new App({ coalescePublishes: true });
  app.topic('chat:*', { history: { size: 10 } });
  app.ws('/live', {});
  const srv = await start(app);
  const live = connect(`ws://127.0.0.1:${srv.port}/live`);
  try {
    const got: string[] = [];
    live.subscribe('room', (event) => got.push(event));
    await live.ready;
    await live.ping();
    app.publish('room', 'a');
    app.publish('room', 'b');
    app.publish('room', 'v', undefined, { volatile: true }); // sends the batch first
    app.publish('room', 'c');
    await eventually(() => got.length === 4);
    assert.deepEqual(got, ['a', 'b', 'v', 'c']);
    assert.throws(() => app.publish('chat:1', 'typing', {}, { volatile: true }), /history/);
    app.publish('chat:1', 'said', {}); // an ordinary publish is fine
  } finally {
    live.close();
    await srv.close();
  }
});

test('volatile send on a closed socket says closed', async () => {
  const app = new App();
  let sock: Socket<unknown> | undefined;
  app.ws('/live', { open: (ws) => void (sock = ws) });
  const srv = await start(app);
  const live = connect(`ws://127.0.0.1:${srv.port}/live`);
  try {
    await live.ready;
    await eventually(() => sock !== undefined);
    sock!.close();
    assert.equal(sock!.send('x', 1, { volatile: true }), 'closed');
  } finally {
    live.close();
    await srv.close();
  }
});
