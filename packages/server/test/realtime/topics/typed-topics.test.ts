// Typed topics: `app.topic(pattern, { events, validate })`. With `validate: true` every publish
// (the app's and a socket's) is checked against the event's schema; without it nothing is
// checked (what is published is sent). Bad declarations fail when declared, with the topic named.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { connect } from '../../../../client/src/index.ts';
import { App, type Schema } from '../../../src/index.ts';
import { eventually, start } from '../../helpers.ts';

const Chat = z.object({ text: z.string().min(1) });

/** Starts `app` with a /live route and a client subscribed to room:1, runs `body` with what it hears, closes both. */
async function withListener(app: App, body: (got: unknown[]) => Promise<void>): Promise<void> {
  app.ws('/live', {});
  const running = await start(app);
  const live = connect(`ws://127.0.0.1:${running.port}/live`);
  try {
    const got: unknown[] = [];
    live.subscribe('room:1', (event, data) => got.push([event, data]));
    await live.ping();
    await body(got);
  } finally {
    live.close();
    await running.close();
  }
}

test('validate: true refuses an undeclared event and data that does not fit, before anything is sent', async () => {
  const app = new App().topic('room:*', { events: { chat: Chat, left: z.undefined() }, validate: true });
  await withListener(app, async (got) => {
    assert.throws(
      () => app.publish('room:1', 'chat', { text: '' }),
      (err: Error) =>
        err instanceof TypeError && /room:1 \(topic room:\*\): event chat data does not fit its schema: text:/.test(err.message),
    );
    assert.throws(() => app.publish('room:1', 'chatt' as 'chat', { text: 'x' }), /event "chatt" is not declared; declared: chat, left/);
    assert.throws(() => app.publish('room:1', 'chat', 'text' as never), /does not fit its schema: \(data\):/);
    assert.equal(app.publish('room:1', 'chat', { text: 'hi' }), true);
    assert.equal(app.publish('room:1', 'left'), true);
    app.publish('elsewhere', 'anything', { not: 'checked' }); // a topic no pattern matches: never validated
    await eventually(() => got.length === 2);
    assert.deepEqual(got, [
      ['chat', { text: 'hi' }],
      ['left', undefined],
    ]);
  });
});

test("validate: true checks a socket's publishes too: the event handler's error reaches the client", async () => {
  const app = new App()
    .topic('room:*', { events: { chat: Chat }, validate: true })
    .ws('/live', { events: { say: { schema: z.string(), handler: (ws, text) => ws.publish('room:1', 'chat', { text }) } } });
  const running = await start(app);
  const listener = connect(`ws://127.0.0.1:${running.port}/live`);
  const talker = connect(`ws://127.0.0.1:${running.port}/live`);
  try {
    const got: unknown[] = [];
    listener.subscribe('room:1', (_event, data) => got.push(data));
    await listener.ping();
    assert.equal(await talker.request('say', 'hello'), true);
    await assert.rejects(talker.request('say', ''), (err: Error & { code?: string }) => err.code === 'HANDLER_ERROR');
    await eventually(() => got.length === 1);
    assert.deepEqual(got, [{ text: 'hello' }]);
  } finally {
    listener.close();
    talker.close();
    await running.close();
  }
});

test('without validate, declared events are types only: what is published is sent as it is', async () => {
  const app = new App().topic('room:*', { events: { chat: Chat } });
  await withListener(app, async (got) => {
    app.publish('room:1', 'chat', { text: '' });
    app.publish('room:1', 'other' as 'chat', 42 as never);
    await eventually(() => got.length === 2);
    assert.deepEqual(got, [
      ['chat', { text: '' }],
      ['other', 42],
    ]);
  });
});

test('an asynchronous schema cannot validate a publish: a clear error, not a promise left behind', () => {
  const app = new App().topic('slow', { events: { e: z.string().refine(async () => true) }, validate: true });
  assert.throws(() => app.publish('slow', 'e', 'x'), /the schema of event e is asynchronous/);
});

test('bad topic declarations fail when declared, naming the topic', () => {
  const app = new App();
  assert.throws(() => app.topic('a', { events: 'chat' as never }), /topic a: events must be an object of schemas by event name/);
  assert.throws(
    () => app.topic('b', { events: { chat: { parse() {} } as unknown as Schema } }),
    /topic b: event chat must be a Standard Schema validator .* got object/,
  );
  assert.throws(() => app.topic('c', { events: { 'bad"name': Chat } }), /topic c: invalid event name/);
  assert.throws(() => app.topic('d', { validate: true }), /topic d: validate needs events/);
  assert.throws(() => app.topic('e', { events: { chat: Chat }, validate: 'yes' as never }), /topic e: validate must be a boolean/);
  assert.deepEqual(app.topics(), []); // nothing half-declared
});

test('app.topics() lists the patterns with their events; routes() lists each ws event with its reply schema', () => {
  const Ack = z.object({ ok: z.boolean() });
  const app = new App()
    .topic('room:*', { events: { chat: Chat } })
    .topic('plain', { history: { size: 5 } })
    .ws('/live', { events: { send: { schema: Chat, reply: Ack, handler: () => ({ ok: true }) }, bare: { handler: () => 1 } } });
  const topics = app.topics();
  assert.deepEqual(
    topics.map((t) => [t.pattern, t.events === null ? null : Object.keys(t.events), t.validate]),
    [
      ['plain', null, false],
      ['room:*', ['chat'], false],
    ],
  );
  const ws = app.routes().find((r) => r.kind === 'ws');
  assert.ok(ws?.kind === 'ws');
  assert.deepEqual(ws.events, [{ name: 'send', schema: Chat, reply: Ack }, { name: 'bare' }]);
});

test('a ws event whose reply is not a schema fails when declared', () => {
  assert.throws(
    () => new App().ws('/live', { events: { send: { reply: { ok: true } as unknown as Schema, handler: () => 1 } } }),
    /ws \/live: event send: reply must be a Standard Schema validator \(e\.g\. a Zod schema\), got object/,
  );
});
