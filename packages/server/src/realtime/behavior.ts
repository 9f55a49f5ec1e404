// A WebSocket route as declared: the behavior object users pass to `app.ws()`, and its
// options checked when the route is declared (some bad values would terminate the uWS core).
import type { Request } from '../http/io/request.ts';
import { isSchema, type Infer, type Schema } from '../http/validation.ts';
import type { Pattern } from '../core/path.ts';
import { isValidEventName } from './protocol.ts';
import type { Socket } from './socket.ts';
import { DEFAULT_MAX_PENDING } from './requests.ts';
import { checkKnownKeys } from '../core/options-check.ts';
import { checkWsRateLimit, type CompiledWsRateLimit, type WsRateLimit } from './rate-limit.ts';
import { checkWsRouteHooks, type WsRouteHooks } from './ws-hooks.ts';
import { checkFallback, type FallbackOptions } from './fallback/options.ts';
import { checkIdempotency, type CompiledIdempotency, type IdempotencyOptions } from './once.ts';
import { checkBinaryEvents, type BinaryEvent, type BinaryTable } from './binary-events.ts';

export interface WsEvent<Data, S, R = undefined, Topics = {}> {
  /** Validates the event's data (any Standard Schema); failures answer a VALIDATION error. */
  schema?: S;
  /**
   * The reply's schema: types what the handler returns (a wrong shape fails to compile) and
   * documents it (AsyncAPI, the typed client's `request()`). Not validated at run time.
   */
  reply?: R;
  /**
   * Also accept the event as a binary frame whose first byte is this code (1 to 255, unique on
   * the route), the rest its payload: `binary: 1` (the payload is UTF-8 text) or
   * `binary: { code: 1, decode(bytes), encode(reply) }`. Such a frame runs like an event frame
   * without `ref`: failures as error frames without `ref`, and no reply unless `encode` turns
   * the handler's value into the bytes of a binary answer (docs/protocol.md, "Binary events").
   */
  binary?: number | BinaryEvent<R extends Schema ? Infer<R> : unknown>;
  /** Its return value (or resolved promise) is the reply to a request that carried a `ref`. */
  handler(
    ws: Socket<Data, Topics>,
    data: S extends Schema ? Infer<S> : unknown,
  ): R extends Schema ? Infer<R> | PromiseLike<Infer<R>> : unknown;
}

/**
 * A ws route's behavior. `E` maps event names to their data schemas and `Rp` to their reply
 * schemas (both inferred from `events`); `Topics` are the app's typed topics, for `ws.publish`.
 */
export interface WsBehavior<Data, E, Rp = {}, Topics = {}> {
  /**
   * Decides the upgrade from the HTTP request (headers, cookies, query, ip): return the
   * socket's data, `false` for 401, or throw an HttpError. May be async.
   */
  upgrade?: (req: Request) => Data | false | Promise<Data | false>;
  /** Browser origins allowed to connect: '*', a list, or a predicate. Default: same origin as Host. */
  allowedOrigins?: '*' | string[] | ((origin: string, req: Request) => boolean);
  open?(ws: Socket<Data, Topics>): unknown;
  /** Authorizes subscriptions asked for by the client. Default: every valid, non-reserved topic. */
  subscribe?(ws: Socket<Data, Topics>, topic: string): boolean | Promise<boolean>;
  /** Client events (`{"type":"event",…}`), by name. */
  // Two mapped types: TypeScript infers `E` from each event's `schema` and `Rp` from its `reply`.
  // (`handler` in the second: an event whose only member is a handler with untyped parameters
  // is left out of `E` by inference, as it always was; `Rp` still names it.)
  events?: { [K in keyof E]: WsEvent<Data, E[K], K extends keyof Rp ? Rp[K] : undefined, Topics> } & {
    [K in keyof Rp]: { reply?: Rp[K]; handler?: unknown };
  };
  /**
   * Frames that are not protocol frames: binary (except binary events: their first byte is a
   * declared code), or text not starting with `{"type":"`. The ArrayBuffer is valid only during the call.
   */
  message?(ws: Socket<Data, Topics>, data: ArrayBuffer, isBinary: boolean): unknown;
  /** The socket's send buffer drained below maxBackpressure. */
  drain?(ws: Socket<Data, Topics>): unknown;
  close?(ws: Socket<Data, Topics>, code: number, reason: string): unknown;
  /** Largest message in bytes; larger ones close the socket with 1009. Default 64 KiB. */
  maxPayloadLength?: number;
  /** Seconds without traffic before the socket is closed (0 disables, else 8–960). Default 120. */
  idleTimeout?: number;
  /** Bytes a socket may have queued before its messages are dropped. Default 1 MiB. */
  maxBackpressure?: number;
  /** Over maxBackpressure: 'close' the socket with 4429 (default) or 'drop' the messages. */
  backpressure?: 'close' | 'drop';
  /** permessage-deflate with a shared compressor. Default false. */
  compression?: boolean;
  /** Minutes before a socket is closed regardless of activity (0 disables, max 240). Default 0. */
  maxLifetime?: number;
  /** uWS sends pings so idle connections stay alive within idleTimeout. Default true. */
  sendPingsAutomatically?: boolean;
  /**
   * Most topics one socket may be subscribed to through `subscribe` frames; past it they are
   * `denied` with reason `too many subscriptions`. Server-side `ws.subscribe()` is not limited
   * (but counts). Default 1000.
   */
  maxSubscriptions?: number;
  /**
   * Server → client requests (`ws.request()`) one socket may have awaiting an answer; past
   * it a request rejects with TOO_MANY_REQUESTS. Default 1000.
   */
  maxPendingRequests?: number;
  /**
   * Upgrades per client address (429 before the handshake) and messages per socket per
   * second (`RATE_LIMITED` error replies, then close 4430). See docs/rate-limit.md.
   */
  rateLimit?: WsRateLimit;
  /** This route's own WebSocket hooks, run after the app's (docs/hooks.md): `{ onEvent: [fn] }`. */
  hooks?: WsRouteHooks;
  /**
   * Also serve this route over plain HTTP for clients whose WebSocket cannot get through:
   * Server-Sent Events down, POSTs up, same protocol (docs/realtime.md, "Fallback transport").
   * `true`, or `{ heartbeat }` (seconds between keep-alive comments, default 15). Default false.
   */
  fallback?: boolean | FallbackOptions;
  /**
   * Events sent with an idempotency key (`live.request(event, data, { retries })`) run once per
   * key: a resend gets the first outcome (docs/realtime.md, "Retried requests"). How long
   * (`window`, ms, default 60 000) and how many keys (`keys`, default 10 000) are remembered.
   */
  idempotency?: IdempotencyOptions;
}

/** Every key of a ws route (`hooks`: the route's lifecycle hooks); one added to WsBehavior and not here fails to compile. */
const WS_KEYS = Object.keys({
  upgrade: true,
  allowedOrigins: true,
  open: true,
  subscribe: true,
  events: true,
  message: true,
  drain: true,
  close: true,
  maxPayloadLength: true,
  idleTimeout: true,
  maxBackpressure: true,
  backpressure: true,
  compression: true,
  maxLifetime: true,
  sendPingsAutomatically: true,
  maxSubscriptions: true,
  maxPendingRequests: true,
  rateLimit: true,
  hooks: true,
  fallback: true,
  idempotency: true,
} satisfies Record<keyof WsBehavior<unknown, unknown> | 'hooks', true>);
const EVENT_KEYS = Object.keys({ schema: true, reply: true, binary: true, handler: true } satisfies Record<
  keyof WsEvent<unknown, unknown>,
  true
>);

export interface WsRouteSpec {
  pattern: Pattern;
  behavior: WsBehavior<any, any>;
}

export interface Limits {
  maxSubscriptions: number;
  maxPendingRequests: number;
  maxPayloadLength: number;
  idleTimeout: number;
  maxBackpressure: number;
  maxLifetime: number;
  rateLimit: CompiledWsRateLimit | null;
  /** Heartbeat seconds of the fallback transport, or null when the route has none. */
  fallback: number | null;
  idempotency: CompiledIdempotency;
  /** The route's binary events by code (binary-events.ts), or null when none declares `binary`. */
  binary: BinaryTable | null;
}

/** Checks options when the route is declared: some bad values terminate the uWS core. */
export function checkWsBehavior(path: string, b: WsBehavior<any, any>): Limits {
  if (typeof b !== 'object' || b === null) throw new TypeError(`ws ${path}: behavior must be an object`);
  const fail = (msg: string): never => {
    throw new TypeError(`ws ${path}: ${msg}`);
  };
  checkKnownKeys(`ws ${path}`, b, WS_KEYS);
  const maxPayloadLength = b.maxPayloadLength ?? 64 * 1024;
  if (!Number.isInteger(maxPayloadLength) || maxPayloadLength < 1 || maxPayloadLength > 64 * 1024 * 1024)
    fail('maxPayloadLength must be an integer from 1 to 67108864');
  const idleTimeout = b.idleTimeout ?? 120;
  if (!Number.isInteger(idleTimeout) || !(idleTimeout === 0 || (idleTimeout >= 8 && idleTimeout <= 960)))
    fail('idleTimeout must be 0 or an integer from 8 to 960 seconds');
  const maxBackpressure = b.maxBackpressure ?? 1024 * 1024;
  if (!Number.isInteger(maxBackpressure) || maxBackpressure < 1024 || maxBackpressure > 1024 * 1024 * 1024)
    fail('maxBackpressure must be an integer from 1024 to 1073741824 bytes');
  const maxLifetime = b.maxLifetime ?? 0;
  if (!Number.isInteger(maxLifetime) || maxLifetime < 0 || maxLifetime > 240) fail('maxLifetime must be an integer from 0 to 240 minutes');
  if (b.backpressure !== undefined && b.backpressure !== 'close' && b.backpressure !== 'drop')
    fail("backpressure must be 'close' or 'drop'");
  const maxSubscriptions = b.maxSubscriptions ?? 1000;
  if (!Number.isInteger(maxSubscriptions) || maxSubscriptions < 1 || maxSubscriptions > 1_000_000)
    fail('maxSubscriptions must be an integer from 1 to 1000000');
  const maxPendingRequests = b.maxPendingRequests ?? DEFAULT_MAX_PENDING;
  if (!Number.isInteger(maxPendingRequests) || maxPendingRequests < 1 || maxPendingRequests > 1_000_000)
    fail('maxPendingRequests must be an integer from 1 to 1000000');
  const o = b.allowedOrigins;
  if (o !== undefined && o !== '*' && typeof o !== 'function' && !(Array.isArray(o) && o.every((x) => typeof x === 'string')))
    fail("allowedOrigins must be '*', a list of origins or a function");
  for (const hook of ['upgrade', 'open', 'subscribe', 'message', 'drain', 'close'] as const) {
    if (b[hook] !== undefined && typeof b[hook] !== 'function') fail(`${hook} must be a function`);
  }
  checkWsRouteHooks(b.hooks, fail);
  if (b.events !== undefined && (typeof b.events !== 'object' || b.events === null))
    fail('events must be an object of { schema?, handler } by event name');
  for (const [name, def] of Object.entries(b.events ?? {})) {
    if (!isValidEventName(name)) fail(`invalid event name ${JSON.stringify(name)}`);
    if (typeof def === 'function') fail(`event ${name} must be { handler } (or { schema, handler }), not a bare function`);
    if (typeof def !== 'object' || def === null) fail(`event ${name} must be an object ({ schema?, handler })`);
    // `data:` for `schema:` would otherwise let unvalidated data reach the handler.
    checkKnownKeys(`ws ${path}: event ${name}`, def as object, EVENT_KEYS);
    if (typeof (def as WsEvent<unknown, unknown>).handler !== 'function') fail(`event ${name} needs a handler`);
    for (const key of ['schema', 'reply'] as const) {
      const schema = (def as WsEvent<unknown, unknown, unknown>)[key];
      if (schema !== undefined && !isSchema(schema))
        fail(
          `event ${name}: ${key} must be a Standard Schema validator (e.g. a Zod schema), got ${schema === null ? 'null' : typeof schema}`,
        );
    }
  }
  return {
    maxPayloadLength,
    idleTimeout,
    maxBackpressure,
    maxLifetime,
    maxSubscriptions,
    maxPendingRequests,
    rateLimit: checkWsRateLimit(path, b.rateLimit),
    fallback: checkFallback(b.fallback, fail),
    idempotency: checkIdempotency(b.idempotency, fail),
    binary: checkBinaryEvents(path, b.events ?? {}, fail),
  };
}
