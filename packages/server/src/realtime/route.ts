// A WebSocket route compiled into a uWS behavior, once at startup:
//
//   upgrade (HTTP) → framing, version and origin checks → app's `upgrade(req)` → uWS upgrade  (upgrade.ts)
//   message → byte-prefix test → control frame (subscribe / event / ping) or the app's `message`  (control.ts)
//             binary: first byte a declared code → binary event (binary-events.ts), else the app's `message`
//   close → bookkeeping (hub, bus interest) → the app's `close`
import type { Settings } from '../core/settings.ts';
import type { UwsWebSocket, UwsWebSocketBehavior } from '../uws/index.ts';
import { checkWsBehavior, type Limits, type WsRouteSpec } from './behavior.ts';
import { FallbackRoute, type FallbackHandlers } from './fallback/route.ts';
import { compileControl, refuseNonProtocolFrame } from './control.ts';
import { binaryEventName, compileBinaryEvents } from './binary-events.ts';
import type { WsHub } from './hub.ts';
import { CLOSE_RATE_LIMITED, CLOSE_TOO_BIG, CLOSE_TOO_SLOW, errorFrame, isControlFrame, readRef } from './protocol.ts';
import { admitMessage, newBudget } from './rate-limit.ts';
import { attachSocket, detachSocket, type Socket, type SocketPolicy } from './socket.ts';
import { compileUpgrade, type UpgradeData } from './upgrade.ts';
import { wsHooksFor, type WsHookLists } from './ws-hooks.ts';
import { EVENT_RATE_LIMITED, runAroundEvent } from './event-outcome.ts';
import type { Request } from '../http/io/request.ts';
import { warnBadInput } from '../core/throttled-log.ts';

/** uWS keeps the user data given to `upgrade` on the socket object itself. */
const socketOf = (ws: UwsWebSocket) => (ws as unknown as UpgradeData).socket;

/** Builds the uWS behavior for one route (once, at startup). */
/** What every WebSocket route takes from the app: its hooks, and the class its upgrade requests are made from (with the app's decorations). */
export interface WsAppParts {
  hooks: WsHookLists;
  RequestClass: typeof Request;
}

/** A compiled route: the uWS behavior, and the fallback transport's HTTP handlers when the route has `fallback`. */
export interface CompiledWsRoute {
  behavior: UwsWebSocketBehavior;
  fallback: FallbackHandlers | null;
}

export function compileWsRoute(
  spec: WsRouteSpec,
  settings: Settings,
  hub: WsHub,
  uwsConstants: { DISABLED: number; SHARED_COMPRESSOR: number },
  tls: boolean,
  app: WsAppParts,
): CompiledWsRoute {
  const b = spec.behavior;
  const hooks = wsHooksFor(app.hooks, b.hooks);
  const limits = checkWsBehavior(spec.pattern.path, b);
  const { behavior, policy } = compileBehavior(spec, settings, hub, uwsConstants, tls, app, hooks, limits);
  if (limits.fallback === null) return { behavior, fallback: null };
  // The same behavior drives the SSE sessions; the same upgrade checks and hook open them.
  const route = new FallbackRoute(
    {
      behavior,
      topics: hub.enableFallback(),
      publishWs: (topic, message) => hub.publishWebSockets(topic, message),
      maxBackpressure: limits.maxBackpressure,
      maxPayloadLength: limits.maxPayloadLength,
      idleTimeout: limits.idleTimeout,
      log: settings.logger,
    },
    limits.fallback,
  );
  const upgrade = compileUpgrade(spec, settings, policy, tls, limits.rateLimit?.upgrades ?? null, hooks, app.RequestClass, route.open);
  return { behavior, fallback: { get: route.get(upgrade), post: route.post } };
}

function compileBehavior(
  spec: WsRouteSpec,
  settings: Settings,
  hub: WsHub,
  uwsConstants: { DISABLED: number; SHARED_COMPRESSOR: number },
  tls: boolean,
  app: WsAppParts,
  hooks: ReturnType<typeof wsHooksFor>,
  limits: Limits,
): { behavior: UwsWebSocketBehavior; policy: SocketPolicy } {
  const b = spec.behavior;
  const log = settings.logger;
  const stats = hub.stats;
  const policy: SocketPolicy = {
    tooSlow:
      b.backpressure === 'drop'
        ? () => {}
        : (socket) => {
            // Deferred: uWS may be iterating subscribers (publish) when it reports the drop.
            queueMicrotask(() => {
              if (!socket.closed) {
                if (stats !== null) stats.slowClosed++;
                warnBadInput(log, { ip: socket.ip, buffered: socket.bufferedAmount }, 'websocket too slow: closing with 4429');
                socket.close(CLOSE_TOO_SLOW, 'Too slow: send buffer full');
              }
            });
          },
    flushTopic: (topic) => hub.flushTopic(topic),
    hub,
    stats,
    maxPendingRequests: limits.maxPendingRequests,
    route: spec.pattern.path,
  };
  // The route's own store (shared by every server) over the cluster's keys (its primary).
  const keys = limits.idempotency.store ?? hub.sharedKeys;
  keys?.useLogger?.(log);
  const shared = keys === null ? null : { keys, scope: spec.pattern.path };
  const { control, event } = compileControl(b, limits, log, hub, hooks.onEvent, hooks.aroundEvent, shared, settings.compileSchemas);
  const binaryEvents = limits.binary;
  const binary = binaryEvents === null ? null : compileBinaryEvents(binaryEvents, event, log);
  const aroundEvent = hooks.aroundEvent;

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

  // onOpen hooks, then the route's open; onSocketClose hooks, then the route's close.
  const onOpen = hooks.onOpen;
  const onSocketClose = hooks.onSocketClose;
  const opening = onOpen.length > 0 || b.open !== undefined;
  const opened = (s: Socket<any>): void => {
    for (const hook of onOpen) safely('onOpen hook', hook, s, undefined, undefined);
    if (b.open) safely('open', b.open, s, undefined, undefined);
  };

  const onMessage = b.message;
  const limit = limits.maxPayloadLength;
  const perSecond = limits.rateLimit?.messagesPerSecond ?? 0;
  const closeAfter = limits.rateLimit?.closeAfter ?? 0;

  /** Over messagesPerSecond: protocol frames get RATE_LIMITED, raw messages are dropped; persistent abuse closes. */
  const refuse = (s: Socket<any>, refused: number, ab: ArrayBuffer, isBinary: boolean): void => {
    if (s.closed) return; // frames still in flight after the close: nothing more to say
    if (closeAfter > 0 && refused >= closeAfter) {
      warnBadInput(log, { ip: s.ip, refused, perSecond }, 'websocket kept sending past its rate limit: closing with 4430');
      return s.close(CLOSE_RATE_LIMITED, 'Rate limited');
    }
    if (refused === 1) log.debug({ ip: s.ip, perSecond }, 'websocket over its message rate limit');
    if (isBinary) {
      // A binary event is refused as an event frame without `ref`; other binary frames are dropped.
      const name = binaryEvents === null ? undefined : binaryEventName(binaryEvents, ab);
      return name === undefined ? undefined : rateLimited(s, name, undefined);
    }
    if (ab.byteLength < 9) return;
    const bytes = new Uint8Array(ab);
    if (!isControlFrame(bytes)) return;
    const frame = parseQuietly(bytes);
    rateLimited(s, frame?.type === 'event' && typeof frame.event === 'string' ? frame.event : undefined, readRef(frame?.ref));
  };

  /** The RATE_LIMITED answer; an event refused here still reaches aroundEvent hooks, with its outcome (event-outcome.ts). */
  const rateLimited = (s: Socket<any>, event: string | undefined, ref: number | undefined): void => {
    const text = errorFrame(ref, 'RATE_LIMITED', `Too many messages: at most ${perSecond} per second`);
    if (aroundEvent.length === 0 || event === undefined) return void s.sendRaw(text, false);
    runAroundEvent(aroundEvent, s, event, () => (s.sendRaw(text, false), EVENT_RATE_LIMITED), log);
  };

  const behavior: UwsWebSocketBehavior = {
    compression: b.compression ? uwsConstants.SHARED_COMPRESSOR : uwsConstants.DISABLED,
    // uWS cuts frames over its own limit without a close frame (the client sees 1006). It
    // gets a larger cap so that messages just over ours get a proper 1009 from us.
    maxPayloadLength: Math.min(64 * 1024 * 1024, limit * 2 + 16 * 1024),
    idleTimeout: limits.idleTimeout,
    maxBackpressure: limits.maxBackpressure,
    closeOnBackpressureLimit: false,
    maxLifetime: limits.maxLifetime,
    sendPingsAutomatically: b.sendPingsAutomatically ?? true,

    upgrade: compileUpgrade(spec, settings, policy, tls, limits.rateLimit?.upgrades ?? null, hooks, app.RequestClass),

    open(ws) {
      const { socket: s, deferOpen } = ws as unknown as UpgradeData;
      attachSocket(s, ws);
      hub.add(s);
      if (!opening) return;
      // uWS 20.57 bug: after an asynchronous (corked) upgrade, a message of 56-71 bytes sent
      // from inside open() leaves the socket deaf to every later client frame. Running the
      // hook right after the upgrade call returns avoids it (test: ws.test.ts, async open sends).
      if (deferOpen) queueMicrotask(() => !s.closed && s.cork(() => opened(s)));
      else opened(s);
    },

    message(ws: UwsWebSocket, ab: ArrayBuffer, isBinary: boolean) {
      const data = ws as unknown as UpgradeData;
      const s = data.socket;
      if (stats !== null) stats.messagesIn++;
      if (ab.byteLength > limit) {
        warnBadInput(log, { ip: s.ip, size: ab.byteLength, limit }, 'websocket message too big: closing with 1009');
        return s.close(CLOSE_TOO_BIG, 'Message too big');
      }
      if (perSecond !== 0) {
        const budget = (data.budget ??= newBudget(Date.now()));
        if (!admitMessage(budget, perSecond, Date.now())) return refuse(s, budget.refused, ab, isBinary);
      }
      if (isBinary) {
        // Binary events (binary-events.ts): a route without them pays this null check only.
        if (binary?.(s, ab)) return;
      } else if (ab.byteLength >= 9) {
        const bytes = new Uint8Array(ab);
        if (isControlFrame(bytes)) return control(s, bytes);
      }
      if (onMessage) safely('message', onMessage, s, ab, isBinary);
      else refuseNonProtocolFrame(s, isBinary, ab.byteLength, log);
    },

    drain(ws) {
      if (b.drain) safely('drain', b.drain, socketOf(ws), undefined, undefined);
    },

    dropped(ws) {
      if (stats !== null) stats.dropped++;
      policy.tooSlow(socketOf(ws));
    },

    close(ws, code, message) {
      const s: Socket<any> = socketOf(ws);
      const reason = Buffer.from(message).toString('utf8'); // copied: the buffer dies with the callback
      const topics = detachSocket(s);
      if (hub.tracksTopics) hub.socketClosing(s, topics);
      hub.presence?.closed(s);
      hub.remove(s);
      if (code === 1006 && reason !== '')
        warnBadInput(log, { ip: s.ip, reason }, 'websocket closed by the server core (protocol violation)');
      for (const hook of onSocketClose) safely('onSocketClose hook', hook, s, code, reason);
      if (b.close) safely('close', b.close, s, code, reason);
    },
  };
  return { behavior, policy };
}

const decoder = new TextDecoder();

/** A control frame's JSON (to read its ref and event), or null when it does not parse. */
function parseQuietly(bytes: Uint8Array): Record<string, unknown> | null {
  try {
    const frame: unknown = JSON.parse(decoder.decode(bytes));
    return typeof frame === 'object' && frame !== null ? (frame as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
