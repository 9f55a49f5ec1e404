// WebSocket routes: options checked when declared, compiled into a uWS behavior at startup.
//
//   upgrade (HTTP) → origin check → app's `upgrade(req)` (may be async) → uWS upgrade
//   message → byte-prefix test → control frame (subscribe / event / ping) or the app's `message`
//   close → bookkeeping → the app's `close`
import { framingProblem, refuseFraming } from '../http/framing.ts';
import { refuseWsVersion } from './handshake.ts';
import { defaultErrorHandler, readParams } from '../http/compile-route.ts';
import { HttpError, ValidationError } from '../http/errors.ts';
import { Request, resolveClientIp } from '../http/io/request.ts';
import { Response, type ResponseHooks } from '../http/io/response.ts';
import type { Settings } from '../app/settings.ts';
import type { Pattern } from '../routing/path.ts';
import { asciiText, type UwsWebSocket, type UwsWebSocketBehavior } from '../uws/index.ts';
import { compileValidator, type Infer, type Schema, type Validator } from '../http/validation.ts';
import {
  CLOSE_TOO_BIG,
  CLOSE_TOO_SLOW,
  RESERVED_PREFIX,
  deniedFrame,
  encodeData,
  errorFrame,
  isControlFrame,
  isValidEventName,
  isValidTopic,
  pongFrame,
  readRef,
  replyFrame,
  subscribedFrame,
  unsubscribedFrame,
} from './protocol.ts';
import { Socket, type SocketPolicy } from './socket.ts';
import type { WsHub } from './hub.ts';

export interface WsEvent<Data, S> {
  /** Validates the event's data (any Standard Schema); failures answer a VALIDATION error. */
  schema?: S;
  /** Its return value (or resolved promise) is the reply to a request that carried a `ref`. */
  handler(ws: Socket<Data>, data: S extends Schema ? Infer<S> : unknown): unknown;
}

export interface WsBehavior<Data, E> {
  /**
   * Decides the upgrade from the HTTP request (headers, cookies, query, ip): return the
   * socket's data, `false` for 401, or throw an HttpError. May be async.
   */
  upgrade?: (req: Request) => Data | false | Promise<Data | false>;
  /** Browser origins allowed to connect: '*', a list, or a predicate. Default: same origin as Host. */
  allowedOrigins?: '*' | string[] | ((origin: string, req: Request) => boolean);
  open?(ws: Socket<Data>): unknown;
  /** Authorizes subscriptions asked for by the client. Default: every valid, non-reserved topic. */
  subscribe?(ws: Socket<Data>, topic: string): boolean | Promise<boolean>;
  /** Client events (`{"type":"event",…}`), by name. */
  events?: { [K in keyof E]: WsEvent<Data, E[K]> };
  /** Frames that are not protocol frames: binary, or text not starting with `{"type":"`. The ArrayBuffer is valid only during the call. */
  message?(ws: Socket<Data>, data: ArrayBuffer, isBinary: boolean): unknown;
  /** The socket's send buffer drained below maxBackpressure. */
  drain?(ws: Socket<Data>): unknown;
  close?(ws: Socket<Data>, code: number, reason: string): unknown;
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
}

export interface WsRouteSpec {
  pattern: Pattern;
  behavior: WsBehavior<any, any>;
}

interface Limits {
  maxSubscriptions: number;
  maxPayloadLength: number;
  idleTimeout: number;
  maxBackpressure: number;
  maxLifetime: number;
}

/** Checks options when the route is declared: some bad values terminate the uWS core. */
export function checkWsBehavior(path: string, b: WsBehavior<any, any>): Limits {
  if (typeof b !== 'object' || b === null) throw new TypeError(`ws ${path}: behavior must be an object`);
  const fail = (msg: string) => {
    throw new TypeError(`ws ${path}: ${msg}`);
  };
  const maxPayloadLength = b.maxPayloadLength ?? 64 * 1024;
  if (!Number.isInteger(maxPayloadLength) || maxPayloadLength < 1 || maxPayloadLength > 64 * 1024 * 1024) fail('maxPayloadLength must be an integer from 1 to 67108864');
  const idleTimeout = b.idleTimeout ?? 120;
  if (!Number.isInteger(idleTimeout) || !(idleTimeout === 0 || (idleTimeout >= 8 && idleTimeout <= 960))) fail('idleTimeout must be 0 or an integer from 8 to 960 seconds');
  const maxBackpressure = b.maxBackpressure ?? 1024 * 1024;
  if (!Number.isInteger(maxBackpressure) || maxBackpressure < 1024 || maxBackpressure > 1024 * 1024 * 1024) fail('maxBackpressure must be an integer from 1024 to 1073741824 bytes');
  const maxLifetime = b.maxLifetime ?? 0;
  if (!Number.isInteger(maxLifetime) || maxLifetime < 0 || maxLifetime > 240) fail('maxLifetime must be an integer from 0 to 240 minutes');
  if (b.backpressure !== undefined && b.backpressure !== 'close' && b.backpressure !== 'drop') fail("backpressure must be 'close' or 'drop'");
  const maxSubscriptions = b.maxSubscriptions ?? 1000;
  if (!Number.isInteger(maxSubscriptions) || maxSubscriptions < 1 || maxSubscriptions > 1_000_000) fail('maxSubscriptions must be an integer from 1 to 1000000');
  const o = b.allowedOrigins;
  if (o !== undefined && o !== '*' && typeof o !== 'function' && !(Array.isArray(o) && o.every((x) => typeof x === 'string'))) fail("allowedOrigins must be '*', a list of origins or a function");
  for (const hook of ['upgrade', 'open', 'subscribe', 'message', 'drain', 'close'] as const) {
    if (b[hook] !== undefined && typeof b[hook] !== 'function') fail(`${hook} must be a function`);
  }
  for (const [name, def] of Object.entries(b.events ?? {})) {
    if (!isValidEventName(name)) fail(`invalid event name ${JSON.stringify(name)}`);
    if (typeof (def as WsEvent<unknown, unknown>)?.handler !== 'function') fail(`event ${name} needs a handler`);
  }
  return { maxPayloadLength, idleTimeout, maxBackpressure, maxLifetime, maxSubscriptions };
}

interface CompiledEvent {
  validate: Validator | null;
  handler: (ws: Socket<any>, data: unknown) => unknown;
}

const decoder = new TextDecoder();
const MAX_TOPICS_PER_FRAME = 1000;
const TOO_MANY = 'too many subscriptions';

/** Builds the uWS behavior for one route (once, at startup). */
export function compileWsRoute(spec: WsRouteSpec, settings: Settings, hub: WsHub, uwsConstants: { DISABLED: number; SHARED_COMPRESSOR: number }, tls: boolean): UwsWebSocketBehavior {
  const b = spec.behavior;
  const limits = checkWsBehavior(spec.pattern.path, b);
  const log = settings.logger;
  const events = new Map<string, CompiledEvent>();
  for (const [name, def] of Object.entries(b.events ?? {}) as [string, WsEvent<unknown, Schema | undefined>][]) {
    events.set(name, { validate: def.schema ? compileValidator('body', def.schema) : null, handler: def.handler as CompiledEvent['handler'] });
  }
  const policy: SocketPolicy = {
    tooSlow:
      b.backpressure === 'drop'
        ? () => {}
        : (socket) => {
            // Deferred: uWS may be iterating subscribers (publish) when it reports the drop.
            queueMicrotask(() => {
              if (!socket.closed) {
                log.warn({ ip: socket.ip, buffered: socket.bufferedAmount }, 'websocket too slow: closing with 4429');
                socket.close(CLOSE_TOO_SLOW, 'Too slow: send buffer full');
              }
            });
          },
    flushTopic: (topic) => hub.flushTopic(topic),
    hub,
  };
  const upgradeHooks: ResponseHooks = {
    settled() {},
    fail(err, req: Request, res: Response) {
      defaultErrorHandler(err, req, res, settings);
    },
    compression: null,
    dedup: null,
  };
  const paramNames = spec.pattern.paramNames;
  const wildcardAt = spec.pattern.wildcardAt;
  const hasParams = paramNames.length > 0 || wildcardAt !== -1;

  // Runs an app hook: a throw or a rejection is logged, never thrown into uWS. The hook and
  // its arguments are passed separately so that no call site builds a closure (message is hot).
  const safely = <A, B, C>(what: string, fn: (a: A, b: B, c: C) => unknown, a: A, b: B, c: C) => {
    try {
      const out = fn(a, b, c);
      if (out instanceof Promise) out.catch((err) => log.error({ err }, `websocket ${what} handler failed`));
    } catch (err) {
      log.error({ err }, `websocket ${what} handler failed`);
    }
  };

  /** Sends a protocol answer; corked when it happens outside a uWS callback. */
  const answer = (s: Socket<any>, text: string, async: boolean) => {
    if (s.closed) return;
    if (async) s.cork(() => s._send(text, false));
    else s._send(text, false);
  };

  const maxSubscriptions = limits.maxSubscriptions;
  const overSubscribed = (s: Socket<any>, topic: string) => s.subscriptionCount >= maxSubscriptions && !s.isSubscribed(topic);

  const subscribeOne = (s: Socket<any>, topic: unknown, ref: number | undefined): Promise<void> | undefined => {
    if (!isValidTopic(topic)) return void answer(s, deniedFrame(topic, ref, 'invalid topic'), false);
    if (topic.startsWith(RESERVED_PREFIX)) return void answer(s, deniedFrame(topic, ref, 'reserved topic'), false);
    if (overSubscribed(s, topic)) return void answer(s, deniedFrame(topic, ref, TOO_MANY), false);
    const finish = (allowed: unknown, async: boolean) => {
      if (s.closed) return;
      // Checked again: several async subscribe hooks may have been pending at once.
      if (allowed === true && overSubscribed(s, topic)) answer(s, deniedFrame(topic, ref, TOO_MANY), async);
      else if (allowed === true) {
        s.subscribe(topic);
        answer(s, subscribedFrame(topic, ref), async);
      } else answer(s, deniedFrame(topic, ref, 'not allowed'), async);
    };
    if (!b.subscribe) return void finish(true, false);
    let allowed: boolean | Promise<boolean>;
    try {
      allowed = b.subscribe(s, topic);
    } catch (err) {
      log.error({ err, topic }, 'websocket subscribe hook failed');
      return void answer(s, deniedFrame(topic, ref, 'error'), false);
    }
    if (!(allowed instanceof Promise)) return void finish(allowed, false);
    return allowed.then(
      (ok) => finish(ok, true),
      (err) => {
        log.error({ err, topic }, 'websocket subscribe hook failed');
        answer(s, deniedFrame(topic, ref, 'error'), true);
      },
    );
  };

  const eventError = (s: Socket<any>, ref: number | undefined, err: unknown, async: boolean) => {
    if (err instanceof ValidationError) return answer(s, errorFrame(ref, 'VALIDATION', 'Invalid event data', err.issues), async);
    if (err instanceof HttpError && err.expose) return answer(s, errorFrame(ref, 'HANDLER_ERROR', err.message), async);
    log.error({ err }, 'websocket event handler failed');
    answer(s, errorFrame(ref, 'HANDLER_ERROR', 'Internal error'), async);
  };

  const runEvent = (s: Socket<any>, name: unknown, data: unknown, ref: number | undefined) => {
    const ev = typeof name === 'string' ? events.get(name) : undefined;
    if (ev === undefined) {
      log.debug({ event: name }, 'websocket: unknown event');
      return answer(s, errorFrame(ref, 'UNKNOWN_EVENT', `Unknown event ${JSON.stringify(String(name))}`), false);
    }
    const reply = (value: unknown, async: boolean) => {
      if (ref === undefined) return;
      let json: string | undefined;
      try {
        json = encodeData(value);
      } catch (err) {
        return eventError(s, ref, err, async);
      }
      answer(s, replyFrame(ref, json), async);
    };
    try {
      const checked = ev.validate ? ev.validate(data) : data;
      if (checked instanceof Promise) {
        checked.then((v) => Promise.resolve(ev.handler(s, v))).then((v) => reply(v, true), (err) => eventError(s, ref, err, true));
        return;
      }
      const out = ev.handler(s, checked);
      if (out instanceof Promise) out.then((v) => reply(v, true), (err) => eventError(s, ref, err, true));
      else reply(out, false);
    } catch (err) {
      eventError(s, ref, err, false);
    }
  };

  const control = (s: Socket<any>, bytes: Uint8Array) => {
    let frame: Record<string, unknown>;
    try {
      frame = JSON.parse(decoder.decode(bytes));
    } catch {
      return answer(s, errorFrame(undefined, 'BAD_FRAME', 'Malformed JSON'), false);
    }
    const ref = readRef(frame.ref);
    switch (frame.type) {
      case 'subscribe': {
        const topics = frame.topics !== undefined ? frame.topics : [frame.topic];
        if (!Array.isArray(topics) || topics.length > MAX_TOPICS_PER_FRAME) return answer(s, errorFrame(ref, 'BAD_FRAME', 'topics must be an array of at most 1000 topics'), false);
        for (const topic of topics) subscribeOne(s, topic, ref);
        return;
      }
      case 'unsubscribe': {
        const topics = frame.topics !== undefined ? frame.topics : [frame.topic];
        if (!Array.isArray(topics)) return answer(s, errorFrame(ref, 'BAD_FRAME', 'topics must be an array'), false);
        for (const topic of topics) {
          if (typeof topic === 'string') s.unsubscribe(topic);
          if (ref !== undefined) answer(s, unsubscribedFrame(String(topic), ref), false);
        }
        return;
      }
      case 'event':
        return runEvent(s, frame.event, frame.data, ref);
      case 'ping':
        return answer(s, pongFrame(ref), false);
      default:
        return answer(s, errorFrame(ref, 'BAD_FRAME', `Unknown frame type ${JSON.stringify(String(frame.type))}`), false);
    }
  };

  const onMessage = b.message;
  const limit = limits.maxPayloadLength;
  const origins = b.allowedOrigins;
  const staticOrigins = typeof origins === 'function' ? undefined : origins;
  const direct = b.upgrade === undefined && typeof origins !== 'function';

  return {
    compression: b.compression ? uwsConstants.SHARED_COMPRESSOR : uwsConstants.DISABLED,
    // uWS cuts frames over its own limit without a close frame (the client sees 1006). It
    // gets a larger cap so that messages just over ours get a proper 1009 from us.
    maxPayloadLength: Math.min(64 * 1024 * 1024, limit * 2 + 16 * 1024),
    idleTimeout: limits.idleTimeout,
    maxBackpressure: limits.maxBackpressure,
    closeOnBackpressureLimit: false,
    maxLifetime: limits.maxLifetime,
    sendPingsAutomatically: b.sendPingsAutomatically ?? true,

    upgrade(ures, ureq, context) {
      const framing = framingProblem(ureq);
      if (framing !== null) return refuseFraming(ures, ureq, framing, log);
      if (refuseWsVersion(ures, ureq, log)) return;
      if (direct) {
        // No upgrade hook and no origin callback: nothing needs a Request, so none is built
        // (less garbage per connection). A refused origin takes the full path below.
        const origin = ureq.getHeader('origin');
        if (origin === '' || originMatches(staticOrigins, origin, ureq.getHeader('host') || undefined)) {
          const ip = resolveClientIp(asciiText(ures.getRemoteAddressAsText()), ureq.getHeader('x-forwarded-for') || undefined, settings.trustProxy);
          const socket = new Socket(undefined, ip, policy);
          ures.upgrade({ socket, deferOpen: false }, ureq.getHeader('sec-websocket-key'), ureq.getHeader('sec-websocket-protocol'), ureq.getHeader('sec-websocket-extensions'), context);
          return;
        }
      }
      const res = new Response(ures, settings, upgradeHooks, false, tls);
      const req = new Request(ureq, res, 'GET', settings, 0);
      res._bind(req);
      // The uWS request dies with this callback: copy the handshake headers now.
      const key = ureq.getHeader('sec-websocket-key');
      const protocol = ureq.getHeader('sec-websocket-protocol');
      const extensions = ureq.getHeader('sec-websocket-extensions');
      const finish = (data: unknown, async: boolean) => {
        if (res.finished) return; // the client left during an async upgrade
        if (data === false) return upgradeHooks.fail(new HttpError(401, 'Unauthorized'), req, res);
        const socket = new Socket(data, req.ip, policy);
        res._handOver(); // handed over to uWS: the HTTP response must not be touched again
        ures.cork(() => ures.upgrade({ socket, deferOpen: async }, key, protocol, extensions, context));
      };
      try {
        req.params = (hasParams ? readParams(ureq, paramNames, wildcardAt) : {}) as never;
        if (!originAllowed(b.allowedOrigins, req)) {
          log.warn({ origin: req._header('origin'), host: req._header('host'), ip: req.ip }, 'websocket upgrade refused: origin not allowed');
          throw new HttpError(403, 'Origin not allowed');
        }
        const decided = b.upgrade ? b.upgrade(req) : undefined;
        if (!(decided instanceof Promise)) {
          res._leaveCallback(); // upgrade() corks by itself
          return finish(decided, false);
        }
        req._snapshot();
        res._leaveCallback();
        ures.onAborted(() => res._abort());
        decided.then(
          (data) => finish(data, true),
          (err) => upgradeHooks.fail(err, req, res),
        );
      } catch (err) {
        res._leaveCallback();
        upgradeHooks.fail(err, req, res);
      }
    },

    open(ws) {
      const { socket: s, deferOpen } = ws as unknown as { socket: Socket<any>; deferOpen: boolean };
      s._attach(ws);
      hub.add(s);
      if (!b.open) return;
      // uWS 20.57 bug: after an asynchronous (corked) upgrade, a message of 56-71 bytes sent
      // from inside open() leaves the socket deaf to every later client frame. Running the
      // hook right after the upgrade call returns avoids it (test: ws.test.ts, async open sends).
      const open = b.open;
      if (deferOpen) queueMicrotask(() => !s.closed && s.cork(() => safely('open', open, s, undefined, undefined)));
      else safely('open', open, s, undefined, undefined);
    },

    message(ws: UwsWebSocket, ab: ArrayBuffer, isBinary: boolean) {
      const s = (ws as unknown as { socket: Socket<any> }).socket;
      if (ab.byteLength > limit) {
        log.warn({ ip: s.ip, size: ab.byteLength, limit }, 'websocket message too big: closing with 1009');
        return s.close(CLOSE_TOO_BIG, 'Message too big');
      }
      if (!isBinary && ab.byteLength >= 9) {
        const bytes = new Uint8Array(ab);
        if (isControlFrame(bytes)) return control(s, bytes);
      }
      if (onMessage) safely('message', onMessage, s, ab, isBinary);
    },

    drain(ws) {
      const s = (ws as unknown as { socket: Socket<any> }).socket;
      if (b.drain) safely('drain', b.drain, s, undefined, undefined);
    },

    dropped(ws) {
      const s = (ws as unknown as { socket: Socket<any> }).socket;
      policy.tooSlow(s);
    },

    close(ws, code, message) {
      const s = (ws as unknown as { socket: Socket<any> }).socket;
      const reason = Buffer.from(message).toString('utf8'); // copied: the buffer dies with the callback
      if (hub.distributed) hub.socketClosing(s._topicsAtClose());
      s._detach();
      hub.remove(s);
      if (code === 1006 && reason !== '') log.warn({ ip: s.ip, reason }, 'websocket closed by the server core (protocol violation)');
      if (b.close) safely('close', b.close, s, code, reason);
    },
  };
}

/** Browsers send Origin on every WebSocket handshake; other clients usually don't. */
function originAllowed(policy: WsBehavior<any, any>['allowedOrigins'], req: Request): boolean {
  const origin = req._header('origin');
  if (origin === undefined) return true;
  if (typeof policy === 'function') return policy(origin, req) === true;
  return originMatches(policy, origin, req._header('host'));
}

/** '*', a list, or (default) same origin as the Host header. */
function originMatches(policy: '*' | string[] | undefined, origin: string, host: string | undefined): boolean {
  if (policy === '*') return true;
  if (Array.isArray(policy)) return policy.includes(origin);
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}
