// The Bus extension point: a custom bus sees every publish (app and socket), hears interest
// changes, and what it delivers reaches this process's subscribers only once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connect } from '../../../client/src/index.ts';
import { App, type Bus, type BusDelivery, type BusMessage } from '../../src/index.ts';
import { recordingLogger, sleep, start, type Running } from '../helpers.ts';

class RecordingBus implements Bus {
  deliver: BusDelivery | null = null;
  published: { topic: string; message: string }[] = [];
  interest: (topic: string, interested: boolean) => void = (topic, interested) => this.changes.push(`${interested ? '+' : '-'}${topic}`);
  changes: string[] = [];
  closed = false;
  start(deliver: BusDelivery): void {
    this.deliver = deliver;
  }
  publish(topic: string, message: BusMessage): void {
    this.published.push({ topic, message: typeof message === 'string' ? message : Buffer.from(message as Uint8Array).toString() });
  }
  close(): void {
    this.closed = true;
  }
}

describe('buses', () => {
  const bus = new RecordingBus();
  let running: Running;
  let app: App;
  before(async () => {
    app = new App({ bus });
    app.ws('/live', { events: { shout: { handler: (ws, data) => void ws.publish('room', 'shout', data) } } });
    running = await start(app);
  });
  after(() => running.close());

  test('interest: first subscriber +, last one gone -, including by disconnecting', async () => {
    const a = connect(`ws://127.0.0.1:${running.port}/live`);
    const b = connect(`ws://127.0.0.1:${running.port}/live`);
    const events: unknown[] = [];
    const offA = a.subscribe('room', (_e, d) => events.push(['a', d]));
    b.subscribe('room', (_e, d) => events.push(['b', d]));
    await a.ready;
    await b.ready;
    await sleep(100);
    assert.deepEqual(bus.changes, ['+room'], 'one + for two subscribers');
    offA();
    await sleep(50);
    assert.deepEqual(bus.changes, ['+room']);
    b.close();
    await sleep(100);
    assert.deepEqual(bus.changes, ['+room', '-room'], 'the last subscriber left by disconnecting');
    a.close();
  });

  test('app and socket publishes go to the bus, serialized once; deliveries reach local subscribers', async () => {
    const listener = connect(`ws://127.0.0.1:${running.port}/live`);
    const talker = connect(`ws://127.0.0.1:${running.port}/live`);
    const got: unknown[] = [];
    listener.subscribe('room', (event, data) => got.push([event, data]));
    await listener.ready;
    await talker.ready;
    await sleep(50);
    bus.published.length = 0;
    app.publish('room', 'hello', { n: 1 });
    await talker.request('shout', { n: 2 });
    bus.deliver!('room', '{"topic":"room","event":"remote","data":{"n":3}}', false);
    await sleep(100);
    assert.deepEqual(
      bus.published.map((p) => JSON.parse(p.message).event),
      ['hello', 'shout'],
    );
    assert.deepEqual(got, [
      ['hello', { n: 1 }],
      ['shout', { n: 2 }],
      ['remote', { n: 3 }],
    ]);
    listener.close();
    talker.close();
  });

  test('close() closes the bus; a malformed bus is refused at construction', async () => {
    assert.throws(() => new App({ bus: {} as never }), /bus must implement/);
    await running.close();
    assert.equal(bus.closed, true);
  });
});

test('a bus whose publish throws: local subscribers still get the message, the failure is logged (not every time)', async () => {
  const { entries, logger } = recordingLogger();
  const bus = new RecordingBus();
  bus.publish = () => {
    throw new Error('broker gone');
  };
  const app = new App({ bus, logger });
  app.ws('/live', {});
  const running = await start(app);
  const client = connect(`ws://127.0.0.1:${running.port}/live`);
  try {
    const got: unknown[] = [];
    client.subscribe('room', (_e, d) => got.push(d));
    await client.ready;
    await sleep(50);
    for (let n = 1; n <= 5; n++) assert.equal(app.publish('room', 'e', n), true);
    await sleep(100);
    assert.deepEqual(got, [1, 2, 3, 4, 5]);
    const failures = entries.filter((e) => e.msg === 'bus publish failed').map((e) => (e.obj as { failures: number }).failures);
    assert.deepEqual(failures, [1, 2, 4]);
  } finally {
    client.close();
    await running.close();
  }
});
