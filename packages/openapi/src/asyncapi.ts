// The AsyncAPI 3.0 document of an app's WebSocket routes, written from the server's side
// (AsyncAPI describes one application): what clients send is a `receive` operation, what
// the server pushes a `send`. One channel per `app.ws` route (its path), with the route's
// events, the control frames of docs/protocol.md and the server's event envelopes.
import type { ResolvedTopicOptions, RouteInfo, Schema, WsRouteInfo } from '@tachyon/server';
import { checkAsyncApiOptions, type AsyncApiOptions, type TopicEvents } from './options.ts';
import { routesOf, warnerOf, type RouteSource } from './openapi.ts';
import { isNoValue, SchemaConverter, type JsonSchema } from './schema.ts';

export type AsyncApiDocument = Record<string, unknown> & { asyncapi: '3.0.0'; channels: Record<string, unknown> };

const ERROR_CODES = ['BAD_FRAME', 'UNKNOWN_EVENT', 'VALIDATION', 'HANDLER_ERROR', 'DENIED', 'NO_PRESENCE', 'RATE_LIMITED'];
const REF = { type: 'integer', minimum: 0, maximum: 9007199254740991, description: 'Chosen by the client, echoed in the answer.' };
const TOPIC = { type: 'string', minLength: 1, maxLength: 256, description: 'Printable ASCII, no `"` or `\\`; `__` topics are reserved.' };
const ANY = {};

const frame = (type: string, properties: JsonSchema, required: string[] = []): JsonSchema => ({
  type: 'object',
  properties: { type: { const: type }, ...properties },
  required: ['type', ...required],
});

/** The control frames of docs/protocol.md, by message id: [summary, payload, direction]. */
const CONTROL: Record<string, [string, JsonSchema]> = {
  subscribe: [
    'Subscribe to one topic (`topic`) or several (`topics`, at most 1000); `since`/`last` recover history.',
    frame('subscribe', {
      topic: TOPIC,
      topics: { type: 'array', items: TOPIC, maxItems: 1000 },
      ref: REF,
      since: { type: 'object', properties: { offset: { type: 'integer' }, epoch: { type: 'string' } }, required: ['offset', 'epoch'] },
      last: { type: 'integer', minimum: 1, maximum: 1000000 },
    }),
  ],
  unsubscribe: [
    'Unsubscribe (answered when `ref` is given).',
    frame('unsubscribe', { topic: TOPIC, topics: { type: 'array', items: TOPIC }, ref: REF }),
  ],
  ping: ['Application-level ping.', frame('ping', { ref: REF })],
  presence: ['Who is on a presence topic.', frame('presence', { topic: TOPIC, ref: REF }, ['topic', 'ref'])],
  clientReply: [
    "The client's answer to a server request (`id`).",
    frame(
      'reply',
      {
        id: { type: 'integer', minimum: 0 },
        data: ANY,
        error: { type: 'object', properties: { code: { enum: ['NO_HANDLER', 'CLIENT_ERROR'] }, message: { type: 'string' } } },
      },
      ['id'],
    ),
  ],
  subscribed: [
    'A subscription was accepted (with the position on a history topic).',
    frame(
      'subscribed',
      { topic: TOPIC, ref: REF, offset: { type: 'integer' }, epoch: { type: 'string' }, recovered: { type: 'boolean' } },
      ['topic'],
    ),
  ],
  unsubscribed: ['An unsubscribe was applied.', frame('unsubscribed', { topic: TOPIC, ref: REF }, ['topic'])],
  denied: [
    'A subscription was refused.',
    frame(
      'denied',
      {
        topic: TOPIC,
        ref: REF,
        reason: {
          enum: [
            'invalid topic',
            'reserved topic',
            'not allowed',
            'error',
            'unavailable',
            'invalid since',
            'invalid last',
            'too many subscriptions',
          ],
        },
      },
      ['topic', 'reason'],
    ),
  ],
  pong: ['The answer to a ping.', frame('pong', { ref: REF })],
  reply: [
    'The answer to a request that carried a `ref` (an event handler returned, or a presence read).',
    frame('reply', { ref: REF, data: ANY }, ['ref']),
  ],
  error: [
    'An event or frame failed; without `ref` when it cannot be matched to a request. The socket stays open.',
    frame(
      'error',
      {
        ref: REF,
        code: { enum: ERROR_CODES },
        message: { type: 'string' },
        issues: { type: 'array', items: { type: 'object', properties: { path: { type: 'array' }, message: { type: 'string' } } } },
      },
      ['code', 'message'],
    ),
  ],
  serverRequest: [
    'The server asks the client (`ws.request()`); the client answers with a `reply` carrying the same `id`.',
    frame('request', { id: { type: 'integer', minimum: 1 }, event: { type: 'string' }, data: ANY }, ['id', 'event']),
  ],
  event: [
    'An event: published to a topic (`topic` present) or sent to this socket. History topics add `offset` and `epoch`; a server with `coalescePublishes` may send a JSON array of these for one topic.',
    {
      type: 'object',
      properties: { topic: TOPIC, event: { type: 'string' }, offset: { type: 'integer' }, epoch: { type: 'string' }, data: ANY },
      required: ['event'],
    },
  ],
};
const RECEIVED = ['subscribe', 'unsubscribe', 'ping', 'presence', 'clientReply'];
/** Control frames the client sends → the answers they may get. */
const ANSWERS: Record<string, string[]> = {
  subscribe: ['subscribed', 'denied'],
  unsubscribe: ['unsubscribed'],
  ping: ['pong'],
  presence: ['reply', 'error'],
};

/** The AsyncAPI 3.0 document of the WebSocket routes of `source` (an app, or `app.routes()`). */
export function generateAsyncApi(source: RouteSource, options: AsyncApiOptions): AsyncApiDocument {
  checkAsyncApiOptions(options);
  const topics = { ...declaredTopics(source), ...options.topics };
  const warn = warnerOf(source, options.onWarning);
  const schemas = new SchemaConverter(warn, 'draft-07');
  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  const ids = new Set<string>();
  for (const route of routesOf(source).filter((r: RouteInfo): r is WsRouteInfo => r.kind === 'ws')) {
    const id = uniqueId(idOf(route.path === '/' ? 'root' : route.path), ids);
    const channelRef = { $ref: `#/channels/${id}` };
    const msgRef = (name: string) => ({ $ref: `#/channels/${id}/messages/${name}` });
    const messages: Record<string, unknown> = {};
    const message = (name: string, title: string, summary: string, payload: JsonSchema) => {
      messages[name] = { name: title, title, summary, contentType: 'application/json', payload };
      return msgRef(name);
    };
    for (const name of [...RECEIVED, ...Object.keys(ANSWERS).flatMap((k) => ANSWERS[k]!), 'error', 'serverRequest', 'event']) {
      if (messages[name] !== undefined) continue;
      const [summary, payload] = CONTROL[name]!;
      message(name, name, summary, payload);
    }
    // The route's events: a request frame each, and its reply (typed when the event declares one).
    const used = new Set(Object.keys(messages));
    for (const event of route.events) {
      const key = uniqueId(`event_${idOf(event.name)}`, used);
      const where = `ws ${route.path}: event ${event.name}`;
      const data = event.schema === undefined ? ANY : schemas.convert(event.schema, 'input', where);
      const sent = message(key, event.name, `The \`${event.name}\` event (\`ref\` asks for a reply).`, {
        type: 'object',
        properties: { type: { const: 'event' }, event: { const: event.name }, data, ref: REF },
        required: ['type', 'event', ...(data === ANY || isNoValue(data) ? [] : ['data'])],
      });
      // A binary event (docs/protocol.md, "Binary events"): also sent as a binary frame whose first byte is this code.
      if (event.binary !== undefined) (messages[key] as Record<string, unknown>)['x-tachyon-binary-code'] = event.binary;
      // Its binary frames are answered by a binary frame [code, ...encode(reply)] (`binary: { code, encode }`).
      if (event.binaryReply === true) (messages[key] as Record<string, unknown>)['x-tachyon-binary-reply'] = true;
      // An event's reply schema (`reply` on the server's WsEvent) types its answer.
      const replyData = event.reply === undefined ? ANY : schemas.convert(event.reply, 'output', `${where} reply`);
      const replied = message(
        `${key}_reply`,
        `${event.name} reply`,
        `The reply to \`${event.name}\` (sent when the frame carried a \`ref\`).`,
        {
          type: 'object',
          properties: { type: { const: 'reply' }, ref: REF, data: replyData },
          required: ['type', 'ref'],
        },
      );
      operations[uniqueId(`${id}_${idOf(event.name)}`, ids)] = {
        action: 'receive',
        channel: channelRef,
        summary: `Client → server: ${event.name}`,
        messages: [sent],
        reply: { channel: channelRef, messages: [replied, msgRef('error')] },
      };
    }
    for (const name of RECEIVED) {
      const op: Record<string, unknown> = { action: 'receive', channel: channelRef, summary: CONTROL[name]![0], messages: [msgRef(name)] };
      if (ANSWERS[name] !== undefined) op.reply = { channel: channelRef, messages: ANSWERS[name]!.map(msgRef) };
      operations[uniqueId(`${id}_${name}`, ids)] = op;
    }
    const pushed = [msgRef('event'), ...topicMessages(topics, schemas, message)];
    operations[uniqueId(`${id}_events`, ids)] = {
      action: 'send',
      channel: channelRef,
      summary: 'Server → client: events published to the topics the socket subscribed to, or sent to it.',
      messages: pushed,
    };
    operations[uniqueId(`${id}_errors`, ids)] = {
      action: 'send',
      channel: channelRef,
      summary: CONTROL.error![0],
      messages: [msgRef('error')],
    };
    operations[uniqueId(`${id}_requests`, ids)] = {
      action: 'send',
      channel: channelRef,
      summary: CONTROL.serverRequest![0],
      messages: [msgRef('serverRequest')],
      reply: { channel: channelRef, messages: [msgRef('clientReply')] },
    };
    channels[id] = {
      address: route.path.replace(/:([A-Za-z_$][\w$]*)/g, '{$1}').replace(/\*$/, '{wildcard}'),
      title: `WebSocket ${route.path}`,
      description: "JSON text frames of the Tachyon protocol (docs/protocol.md); binary frames go to the route's `message` handler.",
      messages,
      ...channelParameters(route.path),
    };
  }
  const doc: AsyncApiDocument = {
    asyncapi: '3.0.0',
    info: { ...options.info },
    defaultContentType: 'application/json',
    channels,
    operations,
  };
  if (options.servers !== undefined) doc.servers = options.servers;
  if (Object.keys(schemas.components).length > 0) doc.components = { schemas: schemas.components };
  return doc;
}

/** The events of the app's `app.topic()` patterns that declare some (none from an `app.routes()` array). */
function declaredTopics(source: RouteSource): TopicEvents {
  const app = source as { topics?: () => readonly ResolvedTopicOptions[] };
  if (Array.isArray(source) || typeof app.topics !== 'function') return {};
  const out: Record<string, { events: Readonly<Record<string, Schema>> }> = {};
  for (const t of app.topics()) if (t.events !== null) out[t.pattern] = { events: t.events };
  return out;
}

/** Typed topic events (the app's `app.topic()` events and the `topics` option), each its own message. */
function topicMessages(
  topics: TopicEvents | undefined,
  schemas: SchemaConverter,
  message: (name: string, title: string, summary: string, payload: JsonSchema) => unknown,
): unknown[] {
  const out: unknown[] = [];
  for (const [pattern, { events }] of Object.entries(topics ?? {}))
    for (const [name, schema] of Object.entries(events)) {
      const data = schemas.convert(schema, 'output', `topic ${pattern}: event ${name}`);
      out.push(
        message(`topic_${idOf(pattern)}_${idOf(name)}`, `${pattern} ${name}`, `\`${name}\` on topics \`${pattern}\`.`, {
          type: 'object',
          properties: { topic: { type: 'string', description: `Matches \`${pattern}\`.` }, event: { const: name }, data },
          required: ['topic', 'event'],
        }),
      );
    }
  return out;
}

function channelParameters(path: string): Record<string, unknown> {
  const parameters: Record<string, unknown> = {};
  for (const m of path.matchAll(/:([A-Za-z_$][\w$]*)/g)) parameters[m[1]!] = { description: `The \`:${m[1]}\` segment of the path.` };
  if (path.endsWith('*')) parameters.wildcard = { description: 'The rest of the path (`*`).' };
  return Object.keys(parameters).length > 0 ? { parameters } : {};
}

function idOf(s: string): string {
  return s.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '') || 'x';
}

function uniqueId(base: string, taken: Set<string>): string {
  let id = base;
  for (let i = 2; taken.has(id); i++) id = `${base}${i}`;
  taken.add(id);
  return id;
}
