// The AsyncAPI 3.0 document of the WebSocket routes: parsed by the official AsyncAPI parser,
// with the route's events and replies, the control frames of docs/protocol.md, typed topic
// events when declared, and served by a real server.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { App, silentLogger } from '@tachyon/server';
import { z } from 'zod';
import { asyncapi, generateAsyncApi } from '../src/index.ts';
import { assertValidAsyncApi, shopApp } from './app.ts';

const info = { title: 'Shop live', version: '1.0.0' };
type Doc = Record<string, any>;

test('every ws route is a channel with its events, their replies and the control frames', async () => {
  const doc: Doc = generateAsyncApi(shopApp(), { info, servers: { local: { host: 'localhost:3000', protocol: 'ws' } } });
  await assertValidAsyncApi(doc);
  assert.equal(doc.asyncapi, '3.0.0');
  const channel = doc.channels.live_room;
  assert.equal(channel.address, '/live/{room}');
  assert.ok(channel.parameters.room);
  const send = channel.messages.event_chat_send;
  assert.equal(send.name, 'chat:send');
  assert.deepEqual(send.payload.properties.event, { const: 'chat:send' });
  assert.deepEqual(send.payload.properties.data.properties.text, { type: 'string', maxLength: 500 });
  assert.deepEqual(send.payload.required, ['type', 'event', 'data']);
  assert.deepEqual(channel.messages.event_typing.payload.required, ['type', 'event'], 'no schema: data optional');
  // A binary event's code, for generated clients; none on the others.
  assert.equal(channel.messages.event_typing['x-tachyon-binary-code'], 1);
  assert.equal('x-tachyon-binary-code' in send, false);
  const op = doc.operations.live_room_chat_send;
  assert.equal(op.action, 'receive');
  assert.deepEqual(op.messages, [{ $ref: '#/channels/live_room/messages/event_chat_send' }]);
  assert.deepEqual(op.reply.messages, [
    { $ref: '#/channels/live_room/messages/event_chat_send_reply' },
    { $ref: '#/channels/live_room/messages/error' },
  ]);
  // The protocol's control frames, both ways.
  for (const name of [
    'subscribe',
    'unsubscribe',
    'ping',
    'presence',
    'clientReply',
    'subscribed',
    'unsubscribed',
    'denied',
    'pong',
    'reply',
    'error',
    'serverRequest',
    'event',
  ])
    assert.ok(channel.messages[name], name);
  assert.deepEqual(
    doc.operations.live_room_subscribe.reply.messages.map((m: Doc) => m.$ref.split('/').pop()),
    ['subscribed', 'denied'],
  );
  assert.equal(doc.operations.live_room_events.action, 'send');
  assert.deepEqual(channel.messages.error.payload.properties.code.enum, [
    'BAD_FRAME',
    'UNKNOWN_EVENT',
    'VALIDATION',
    'HANDLER_ERROR',
    'DENIED',
    'NO_PRESENCE',
    'RATE_LIMITED',
  ]);
  assert.deepEqual(doc.servers, { local: { host: 'localhost:3000', protocol: 'ws' } });
});

test('typed topic events (the app.topic() extension point) and named schemas as components', async () => {
  const app = new App({ logger: silentLogger });
  const Chat = z.object({ user: z.string(), text: z.string() }).meta({ id: 'ChatMessage' });
  app.ws('/', { events: { say: { schema: Chat, handler: () => true }, leave: { schema: z.undefined(), handler: () => true } } });
  app.ws('/admin/*', {});
  const warnings: string[] = [];
  const doc: Doc = generateAsyncApi(app, {
    info,
    onWarning: (m) => warnings.push(m),
    topics: { 'room:*': { events: { chat: Chat, joined: z.object({ user: z.string() }) } } },
  });
  await assertValidAsyncApi(doc);
  assert.deepEqual(Object.keys(doc.channels), ['root', 'admin']);
  assert.equal(doc.channels.admin.address, '/admin/{wildcard}');
  assert.deepEqual(doc.channels.root.messages.event_say.payload.properties.data, { $ref: '#/components/schemas/ChatMessage' });
  // z.undefined(): an event without data (JSON Schema has no undefined; no warning).
  const leave = doc.channels.root.messages.event_leave.payload;
  assert.deepEqual(leave.properties.data, { not: {}, description: 'No value: absent.' });
  assert.deepEqual(leave.required, ['type', 'event']);
  // Read as input (what clients send) and as output (what topics carry), Zod's forms differ.
  assert.deepEqual(Object.keys(doc.components.schemas), ['ChatMessage', 'ChatMessageOutput']);
  const pushed = doc.operations.root_events.messages.map((m: Doc) => m.$ref.split('/').pop());
  assert.deepEqual(pushed, ['event', 'topic_room_chat', 'topic_room_joined']);
  assert.deepEqual(warnings, []);
  assert.deepEqual(doc.channels.root.messages.topic_room_chat.payload.properties.data, { $ref: '#/components/schemas/ChatMessageOutput' });
});

test("the app's own declarations: app.topic() events and each ws event's reply schema, without options", async () => {
  const Chat = z.object({ user: z.string(), text: z.string() });
  const app = new App({ logger: silentLogger })
    .topic('room:*', { events: { chat: Chat, left: z.object({ user: z.string() }) } })
    .topic('plain', { history: { size: 5 } }) // no events: not a typed topic
    .ws('/live', {
      events: {
        send: { schema: Chat, reply: z.object({ ok: z.boolean(), at: z.number().int() }), handler: () => ({ ok: true, at: 1 }) },
        bare: { handler: () => 1 },
      },
    });
  const warnings: string[] = [];
  const doc: Doc = generateAsyncApi(app, { info, onWarning: (m) => warnings.push(m) });
  await assertValidAsyncApi(doc);
  const messages = doc.channels.live.messages;
  const reply = messages.event_send_reply.payload.properties.data;
  assert.deepEqual(reply.properties.ok, { type: 'boolean' });
  assert.equal(reply.properties.at.type, 'integer');
  assert.deepEqual(reply.required, ['ok', 'at']);
  assert.deepEqual(messages.event_bare_reply.payload.properties.data, {}, 'no reply schema: any data');
  const pushed = doc.operations.live_events.messages.map((m: Doc) => m.$ref.split('/').pop());
  assert.deepEqual(pushed, ['event', 'topic_room_chat', 'topic_room_left']);
  assert.deepEqual(messages.topic_room_chat.payload.properties.data.required, ['user', 'text']);
  // The option adds patterns and replaces a declared pattern's events.
  const both: Doc = generateAsyncApi(app, {
    info,
    topics: { 'room:*': { events: { typing: z.boolean() } }, news: { events: { item: z.string() } } },
  });
  await assertValidAsyncApi(both);
  const names = both.operations.live_events.messages.map((m: Doc) => m.$ref.split('/').pop());
  assert.deepEqual(names, ['event', 'topic_room_typing', 'topic_news_item']);
  // From an app.routes() array: the routes' replies, no topics (an array carries none).
  const fromRoutes: Doc = generateAsyncApi(app.routes(), { info, onWarning: (m) => warnings.push(m) });
  await assertValidAsyncApi(fromRoutes);
  assert.deepEqual(fromRoutes.operations.live_events.messages.length, 1);
  assert.deepEqual(warnings, []);
});

test('an app without ws routes gives a valid, empty document', async () => {
  const doc: Doc = generateAsyncApi(new App({ logger: silentLogger }), { info });
  await assertValidAsyncApi(doc);
  assert.deepEqual(doc.channels, {});
});

test('served by a real server, once; bad options throw', async () => {
  const app = shopApp();
  app.get('/asyncapi.json', asyncapi(app, { info }));
  const server = await app.listen(0, '127.0.0.1');
  try {
    const res = await fetch(`http://127.0.0.1:${server.port}/asyncapi.json`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    const doc = await res.json();
    await assertValidAsyncApi(doc);
    assert.deepEqual(doc, generateAsyncApi(app, { info }));
  } finally {
    await app.close();
  }
  const bad: [unknown, RegExp][] = [
    [null, /^TypeError: asyncapi\(\): options must be an object/],
    [{ info: { version: '1' } }, /info\.title must be a non-empty string/],
    [{ info, server: {} }, /unknown option "server" \(did you mean "servers"\?\)/],
    [{ info, servers: { a: { host: 'x' } } }, /servers\.a must be \{ host, protocol/],
    [{ info, topics: { 'room:*': { events: { chat: {} } } } }, /topics\["room:\*"\] must be \{ events: \{ name: Standard Schema \} \}/],
  ];
  for (const [options, message] of bad) assert.throws(() => asyncapi(app, options as never), message, JSON.stringify(options));
});

test('an event whose binary frames are answered in bytes is marked (x-tachyon-binary-reply); routes() says so', async () => {
  const app = new App({ logger: silentLogger });
  app.ws('/game', {
    events: {
      keys: { binary: { code: 1, encode: (n: number) => Uint8Array.of(n) }, reply: z.number(), handler: () => 1 },
      cursor: { binary: 2, handler() {} },
    },
  });
  const doc: Doc = generateAsyncApi(app, { info });
  await assertValidAsyncApi(doc);
  const messages = doc.channels.game.messages;
  assert.equal(messages.event_keys['x-tachyon-binary-code'], 1);
  assert.equal(messages.event_keys['x-tachyon-binary-reply'], true);
  assert.equal(messages.event_cursor['x-tachyon-binary-code'], 2);
  assert.equal('x-tachyon-binary-reply' in messages.event_cursor, false);
  const ws = app.routes().find((r) => r.kind === 'ws');
  assert.deepEqual(ws?.kind === 'ws' && ws.events.map((e) => [e.name, e.binary, e.binaryReply]), [
    ['keys', 1, true],
    ['cursor', 2, undefined],
  ]);
});
