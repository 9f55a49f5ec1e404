// aroundEvent (each event frame, to its outcome), onPublish (metadata for the bus) and
// onDeliver (metadata that came back from it), over real sockets (docs/hooks.md).
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, test } from 'node:test';
import { z } from 'zod';
import {
  App,
  HttpError,
  silentLogger,
  type Bus,
  type BusDelivery,
  type BusMessage,
  type BusMeta,
  type EventOutcome,
} from '../../src/index.ts';
import { eventually, openWs, recordingLogger, sleep, start } from '../helpers.ts';

/** A bus that records what it is asked to publish, and how many arguments it got. */
class RecordingBus implements Bus {
  deliver: BusDelivery | null = null;
  published: { topic: string; message: string; meta: BusMeta | undefined; args: number }[] = [];
  start(deliver: BusDelivery): void {
    this.deliver = deliver;
  }
  publish(topic: string, message: BusMessage, _isBinary: boolean, meta?: BusMeta): void {
    const text = typeof message === 'string' ? message : Buffer.from(message as Uint8Array).toString();
    this.published.push({ topic, message: text, meta, args: arguments.length });
  }
  interest(): void {}
  close(): void {}
}

describe('aroundEvent', () => {
  test('wraps each event to its outcome: OK, VALIDATION, HANDLER_ERROR, REFUSED, UNKNOWN_EVENT; its context is active in the handler', async () => {
    const store = new AsyncLocalStorage<string>();
    const outcomes: string[] = [];
    const seenInHandler: (string | undefined)[] = [];
    const app = new App({ logger: silentLogger });
    app.addHook('onEvent', (_ws, event) => event !== 'forbidden');
    app.addHook('aroundEvent', async (_ws, event, run) => {
      const outcome: EventOutcome = await store.run(`ctx:${event}`, run);
      const err = outcome.error instanceof Error ? `${outcome.error.constructor.name}:${outcome.error.message}` : '';
      outcomes.push(`${event} ${outcome.code} ${err}`.trim());
    });
    app.ws('/live', {
      events: {
        sync: { handler: () => (seenInHandler.push(store.getStore()), 'now') },
        slow: {
          handler: async () => {
            await sleep(30);
            seenInHandler.push(store.getStore()); // after an await: still the wrapper's context
            return 'later';
          },
        },
        typed: { schema: z.object({ n: z.number() }), handler: (_ws, data) => data.n },
        broken: {
          handler: async () => {
            throw new TypeError('bug');
          },
        },
        teapot: {
          handler: () => {
            throw new HttpError(418, 'short and stout');
          },
        },
        forbidden: { handler: () => 'never' },
      },
    });
    const srv = await start(app);
    const client = await openWs(`ws://127.0.0.1:${srv.port}/live`);
    const send = (event: string, ref: number, data?: unknown) => client.ws.send(JSON.stringify({ type: 'event', event, data, ref }));
    try {
      send('sync', 1);
      assert.equal((await client.next((m) => m.ref === 1)).data, 'now');
      send('slow', 2);
      assert.equal((await client.next((m) => m.ref === 2)).data, 'later');
      send('typed', 3, { n: 'x' });
      assert.equal((await client.next((m) => m.ref === 3)).code, 'VALIDATION');
      send('broken', 4);
      assert.equal((await client.next((m) => m.ref === 4)).code, 'HANDLER_ERROR');
      send('teapot', 5);
      assert.equal((await client.next((m) => m.ref === 5)).message, 'short and stout');
      send('forbidden', 6);
      assert.equal((await client.next((m) => m.ref === 6)).message, 'Event refused', 'the wire is as before: a HANDLER_ERROR frame');
      send('nope', 7);
      assert.equal((await client.next((m) => m.ref === 7)).code, 'UNKNOWN_EVENT');
      await eventually(() => outcomes.length === 7);
      assert.deepEqual(outcomes, [
        'sync OK',
        'slow OK',
        'typed VALIDATION ValidationError:Invalid body',
        'broken HANDLER_ERROR TypeError:bug',
        'teapot HANDLER_ERROR HttpError:short and stout',
        'forbidden REFUSED HttpError:Event refused',
        'nope UNKNOWN_EVENT',
      ]);
      assert.deepEqual(seenInHandler, ['ctx:sync', 'ctx:slow']);
    } finally {
      client.ws.close();
      await srv.close();
    }
  });

  test('app hooks wrap route hooks; an event over the rate limit reaches them as RATE_LIMITED', async () => {
    const seen: string[] = [];
    const app = new App({ logger: silentLogger });
    app.addHook('aroundEvent', (_ws, event, run) => {
      seen.push(`app> ${event}`);
      const out = run();
      assert.ok(!(out instanceof Promise), 'a sync handler gives its outcome synchronously');
      seen.push(`app< ${event} ${out.code}`);
    });
    app.ws('/live', {
      rateLimit: { messagesPerSecond: 2, closeAfter: 0 },
      hooks: {
        aroundEvent: (_ws, event, run) => {
          seen.push(`route> ${event}`);
          run();
          seen.push(`route< ${event}`);
        },
      },
      events: { hi: { handler: () => 'hello' } },
    });
    const srv = await start(app);
    const client = await openWs(`ws://127.0.0.1:${srv.port}/live`);
    try {
      for (let ref = 1; ref <= 3; ref++) client.ws.send(JSON.stringify({ type: 'event', event: 'hi', ref }));
      assert.equal((await client.next((m) => m.ref === 1)).data, 'hello');
      assert.equal((await client.next((m) => m.ref === 2)).data, 'hello');
      assert.equal((await client.next((m) => m.ref === 3)).code, 'RATE_LIMITED');
      assert.deepEqual(seen.slice(0, 4), ['app> hi', 'route> hi', 'route< hi', 'app< hi OK']);
      assert.deepEqual(seen.slice(8), ['app> hi', 'route> hi', 'route< hi', 'app< hi RATE_LIMITED']);
    } finally {
      client.ws.close();
      await srv.close();
    }
  });

  test('a broken wrapper (throws, never calls run, calls it twice): the event runs exactly once, logged', async () => {
    const { entries, logger } = recordingLogger();
    let handled = 0;
    const app = new App({ logger });
    app.addHook('aroundEvent', (_ws, event, run) => {
      if (event === 'skip') return;
      if (event === 'throw') throw new Error('wrapper bug');
      run();
      if (event === 'twice') run();
    });
    app.ws('/live', {
      events: { skip: { handler: () => ++handled }, throw: { handler: () => ++handled }, twice: { handler: () => ++handled } },
    });
    const srv = await start(app);
    const client = await openWs(`ws://127.0.0.1:${srv.port}/live`);
    try {
      client.ws.send(JSON.stringify({ type: 'event', event: 'skip', ref: 1 }));
      assert.equal((await client.next((m) => m.ref === 1)).data, 1);
      client.ws.send(JSON.stringify({ type: 'event', event: 'throw', ref: 2 }));
      assert.equal((await client.next((m) => m.ref === 2)).data, 2);
      client.ws.send(JSON.stringify({ type: 'event', event: 'twice', ref: 3 }));
      assert.equal((await client.next((m) => m.ref === 3)).data, 3);
      await sleep(50);
      assert.equal(handled, 3, 'each event ran once');
      assert.equal(client.messages.filter((m) => (m as { ref?: number }).ref === 3).length, 0, 'no second reply');
      const messages = entries.map((e) => `${e.msg} ${String((e.obj as { err?: Error }).err?.message ?? '')}`.trim());
      assert.ok(messages.includes('aroundEvent hook returned without calling run(): the event ran anyway'));
      assert.ok(messages.includes('aroundEvent hook failed wrapper bug'));
      assert.ok(messages.some((m) => m.startsWith('aroundEvent hook failed aroundEvent: run() called twice')));
    } finally {
      client.ws.close();
      await srv.close();
    }
  });

  test('a bad hook is refused at declaration; the hooks are app-level', async () => {
    const app = new App();
    for (const name of ['aroundEvent', 'onPublish', 'onDeliver'])
      await assert.rejects(
        app.register((scope) => void scope.addHook(name as never, (() => {}) as never)),
        new RegExp(`addHook\\("${name}"\\): an app-level hook`),
      );
    assert.throws(() => app.addHook('aroundEvent', 'x' as never), /aroundEvent/);
    assert.throws(() => app.ws('/w', { hooks: { aroundEvent: 1 } as never }), /ws \/w: hook "aroundEvent" must be a function/);
  });
});

describe('onPublish and onDeliver', () => {
  test('onPublish sees app, raw and socket publishes in the publisher’s call; its metadata rides the bus, merged', async () => {
    const bus = new RecordingBus();
    const app = new App({ bus });
    const seen: string[] = [];
    app.addHook('onPublish', (topic, info) => {
      seen.push(
        `${topic} ${info.event} ${info.socket === null ? 'app' : 'socket'} volatile=${info.volatile} distributed=${info.distributed}`,
      );
      return { traceparent: `tp-${info.event}`, first: '1' };
    });
    app.addHook('onPublish', (topic) => (topic === 'quiet' ? undefined : { traceparent: 'overridden', second: '2' }));
    app.ws('/live', { events: { shout: { handler: (ws, data) => void ws.publish('room', 'shout', data) } } });
    const srv = await start(app);
    const client = await openWs(`ws://127.0.0.1:${srv.port}/live`);
    try {
      app.publish('room', 'news', { a: 1 });
      app.publish('quiet', 'news', 1, { volatile: true });
      app.publishRaw('room', 'raw bytes');
      client.ws.send(JSON.stringify({ type: 'event', event: 'shout', data: 'hey', ref: 1 }));
      await client.next((m) => m.ref === 1);
      assert.deepEqual(seen, [
        'room news app volatile=false distributed=true',
        'quiet news app volatile=true distributed=true',
        'room null app volatile=false distributed=true',
        'room shout socket volatile=false distributed=true',
      ]);
      assert.deepEqual(
        bus.published.map((p) => [p.topic, p.meta]),
        [
          ['room', { traceparent: 'overridden', first: '1', second: '2' }],
          ['quiet', { traceparent: 'tp-news', first: '1' }],
          ['room', { traceparent: 'overridden', first: '1', second: '2' }],
          ['room', { traceparent: 'overridden', first: '1', second: '2' }],
        ],
      );
      assert.equal(bus.published[0]!.message, '{"topic":"room","event":"news","data":{"a":1}}', 'the message bytes are unchanged');
    } finally {
      client.ws.close();
      await srv.close();
    }
  });

  test('without onPublish hooks the bus is called as before: three arguments, no metadata', async () => {
    const bus = new RecordingBus();
    const app = new App({ bus });
    app.ws('/live', {});
    const srv = await start(app);
    app.publish('room', 'news', 1);
    app.publishRaw('room', 'x');
    await srv.close();
    assert.deepEqual(
      bus.published.map((p) => p.args),
      [3, 3],
    );
  });

  test('a throwing hook or bad metadata is logged; the publish goes on without it', async () => {
    const { entries, logger } = recordingLogger();
    const bus = new RecordingBus();
    const app = new App({ bus, logger });
    app.addHook('onPublish', (topic) => {
      if (topic === 'throws') throw new Error('hook bug');
      if (topic === 'number') return { n: 1 } as never;
      if (topic === 'async') return Promise.resolve({ a: 'b' }) as never;
      return undefined;
    });
    app.ws('/live', {});
    const srv = await start(app);
    for (const topic of ['throws', 'number', 'async']) app.publish(topic, 'e', 1);
    await srv.close();
    assert.deepEqual(
      bus.published.map((p) => [p.topic, p.meta]),
      [
        ['throws', undefined],
        ['number', undefined],
        ['async', undefined],
      ],
    );
    const lines = entries.filter((e) => e.level === 'error').map((e) => e.msg);
    assert.deepEqual(lines, [
      'onPublish hook failed',
      'onPublish hook returned bad metadata: ignored',
      'onPublish hook returned bad metadata: ignored',
    ]);
  });

  test('coalesced publishes: a batch carries the metadata of its first publish', async () => {
    const bus = new RecordingBus();
    const app = new App({ bus, coalescePublishes: true });
    let n = 0;
    app.addHook('onPublish', () => ({ n: String(++n) }));
    app.ws('/live', {});
    const srv = await start(app);
    app.publish('room', 'a', 1);
    app.publish('room', 'b', 2);
    await sleep(20);
    await srv.close();
    assert.equal(bus.published.length, 1);
    assert.deepEqual(bus.published[0]!.meta, { n: '1' });
  });

  test('onDeliver hears arrivals that carry metadata, before the subscribers get them; a throw is logged', async () => {
    const { entries, logger } = recordingLogger();
    const bus = new RecordingBus();
    const app = new App({ bus, logger });
    const heard: unknown[] = [];
    app.addHook('onDeliver', (topic, meta) => {
      heard.push([topic, meta]);
      if (meta.boom === '1') throw new Error('deliver bug');
    });
    app.ws('/live', {});
    const srv = await start(app);
    const client = await openWs(`ws://127.0.0.1:${srv.port}/live`);
    try {
      client.ws.send(JSON.stringify({ type: 'subscribe', topic: 'room', ref: 1 }));
      await client.next((m) => m.type === 'subscribed');
      bus.deliver!('room', '{"topic":"room","event":"plain","data":1}', false);
      bus.deliver!('room', '{"topic":"room","event":"traced","data":2}', false, { traceparent: 'x' });
      bus.deliver!('room', '{"topic":"room","event":"boom","data":3}', false, { boom: '1' });
      assert.equal((await client.next((m) => m.event === 'plain')).data, 1);
      assert.equal((await client.next((m) => m.event === 'traced')).data, 2);
      assert.equal((await client.next((m) => m.event === 'boom')).data, 3, 'delivered although the hook threw');
      assert.deepEqual(heard, [
        ['room', { traceparent: 'x' }],
        ['room', { boom: '1' }],
      ]);
      assert.ok(entries.some((e) => e.msg === 'onDeliver hook failed'));
    } finally {
      client.ws.close();
      await srv.close();
    }
  });
});
