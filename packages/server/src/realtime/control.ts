// Control frames (docs/protocol.md): text frames starting with `{"type":"` are Tachyon's own
// protocol: subscribe / unsubscribe (with the route's authorization and the per-socket
// subscription limit), events with replies, ping. Compiled once per route; the returned
// function runs per control frame and builds no closure on the synchronous path.
import { HttpError, ValidationError } from '../http/errors.ts';
import { compileValidator, type Schema, type Validator } from '../http/validation.ts';
import type { Logger } from '../core/logger.ts';
import type { Limits, WsBehavior, WsEvent } from './behavior.ts';
import {
  RESERVED_PREFIX,
  deniedFrame,
  encodeData,
  errorFrame,
  isValidTopic,
  pongFrame,
  readRef,
  replyFrame,
  subscribedFrame,
  unsubscribedFrame,
} from './protocol.ts';
import { replyReceived, type Socket, type SocketHub } from './socket.ts';
import { readHistoryRequest } from './history/request.ts';
import type { HistoryRequest } from './history/store.ts';
import { compilePresenceRead } from './presence/read.ts';
import { eventRefused, runGate, type WsHooks } from './ws-hooks.ts';
import { OnceWindow, type Answer, type SharedKeys } from './once.ts';
import { EVENT_OK, EVENT_UNKNOWN, runAroundEvent, type EventOutcome } from './event-outcome.ts';
import { warnBadInput } from '../core/throttled-log.ts';
import { readEventFrame } from './event-frame.ts';
import type { BinaryAnswer, RunEvent } from './binary-events.ts';

interface CompiledEvent {
  validate: Validator | null;
  handler: (ws: Socket<any>, data: unknown) => unknown;
}

/** Handles one control frame (its bytes are valid only during the call). */
export type ControlHandler = (s: Socket<any>, bytes: Uint8Array) => void;

const decoder = new TextDecoder();
/** Bounds the work one subscribe frame can ask for. */
const MAX_TOPICS_PER_FRAME = 1000;
/** The `denied` reason past `maxSubscriptions` (docs/protocol.md). */
const TOO_MANY = 'too many subscriptions';

/** Sends a protocol answer; corked when it happens outside a uWS callback. */
function answer(s: Socket<any>, text: string, async: boolean): void {
  if (s.closed) return;
  if (async) s.cork(() => s.sendRaw(text, false));
  else s.sendRaw(text, false);
}

/**
 * Small binary answers are assembled in one buffer kept for the process, through a view of each
 * length made once: uWS copies a frame before send() returns (and a fallback session refuses
 * binary frames), so the buffer is free again at once. A fresh small Uint8Array per answer
 * costs more than its bytes: V8 keeps it on its heap, and handing it to uWS moves it to a
 * malloc'd backing store of its own (about 800 instructions per game keystroke, callgrind).
 */
const SCRATCH_MAX = 256;
const scratch = new ArrayBuffer(SCRATCH_MAX);
const scratchViews: (Uint8Array | undefined)[] = [];

function answerFrame(code: number, bytes: Uint8Array): Uint8Array {
  const length = bytes.length + 1;
  const frame = length > SCRATCH_MAX ? new Uint8Array(length) : (scratchViews[length] ??= new Uint8Array(scratch, 0, length));
  frame[0] = code;
  frame.set(bytes, 1);
  return frame;
}

/** A binary event's answer, `[code, ...bytes]`; corked as `answer` is (the frame is made right before its send). */
function answerBinary(s: Socket<any>, code: number, bytes: Uint8Array, async: boolean): void {
  if (s.closed) return;
  if (async) s.cork(() => s.sendRaw(answerFrame(code, bytes), true));
  else s.sendRaw(answerFrame(code, bytes), true);
}

// Built once: the answers to frames nothing on the route reads.
const NOT_PROTOCOL_TEXT = errorFrame(
  undefined,
  'BAD_FRAME',
  'Not a protocol frame (those start with {"type":"), and this route has no message handler',
);
const NOT_PROTOCOL_BINARY = errorFrame(undefined, 'BAD_FRAME', 'Binary frame, and this route has no message handler');

/**
 * A frame that is not a protocol frame (binary, or text not starting with `{"type":"`) on a
 * route without a `message` hook: nothing would read it, so the client is told (BAD_FRAME,
 * without `ref`) and the server logs it at debug level.
 */
export function refuseNonProtocolFrame(s: Socket<any>, isBinary: boolean, size: number, log: Logger): void {
  log.debug({ ip: s.ip, binary: isBinary, size }, 'websocket: not a protocol frame, and the route has no message handler');
  answer(s, isBinary ? NOT_PROTOCOL_BINARY : NOT_PROTOCOL_TEXT, false);
}

/** Compiled once per route (route.ts): the control frames' handler, and the runner of binary events. @internal */
export function compileControl(
  b: WsBehavior<any, any>,
  limits: Limits,
  log: Logger,
  hub: SocketHub,
  onEvent: readonly WsHooks['onEvent'][] = [],
  aroundEvent: readonly WsHooks['aroundEvent'][] = [],
  shared: { keys: SharedKeys; scope: string } | null = null,
  compileSchemas = true,
): { control: ControlHandler; event: RunEvent } {
  const events = new Map<string, CompiledEvent>();
  for (const [name, def] of Object.entries(b.events ?? {}) as [string, WsEvent<unknown, Schema | undefined>][]) {
    events.set(name, {
      validate: def.schema ? compileValidator('body', def.schema, compileSchemas) : null,
      handler: def.handler as CompiledEvent['handler'],
    });
  }

  const maxSubscriptions = limits.maxSubscriptions;
  const overSubscribed = (s: Socket<any>, topic: string) => s.subscriptionCount >= maxSubscriptions && !s.isSubscribed(topic);

  const subscribeOne = (
    s: Socket<any>,
    topic: unknown,
    ref: number | undefined,
    history: HistoryRequest | null,
  ): Promise<void> | undefined => {
    if (!isValidTopic(topic)) return void answer(s, deniedFrame(topic, ref, 'invalid topic'), false);
    if (topic.startsWith(RESERVED_PREFIX)) return void answer(s, deniedFrame(topic, ref, 'reserved topic'), false);
    if (overSubscribed(s, topic)) return void answer(s, deniedFrame(topic, ref, TOO_MANY), false);
    const finish = (allowed: unknown, async: boolean) => {
      if (s.closed) return;
      // Checked again: several async subscribe hooks may have been pending at once.
      if (allowed === true && overSubscribed(s, topic)) answer(s, deniedFrame(topic, ref, TOO_MANY), async);
      else if (allowed === true) {
        // History topics: the replay (when asked), then the subscription and a positioned answer.
        const h = hub.historyOf(topic);
        if (h !== null) return hub.subscribeHistory(s, topic, h, history, ref, async);
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

  const presence = compilePresenceRead(b, log, answer, hub);

  /**
   * Answers a failed event (the frames are the same whatever failed); `refused`: an onEvent hook
   * threw or said no. `to`: where answers go (a keyed frame's through the route's OnceWindow, once.ts).
   */
  const eventError = (s: Socket<any>, ref: number | undefined, err: unknown, async: boolean, to: Answer, refused = false): EventOutcome => {
    const code = refused ? 'REFUSED' : err instanceof ValidationError ? 'VALIDATION' : 'HANDLER_ERROR';
    if (err instanceof ValidationError) to(s, errorFrame(ref, 'VALIDATION', 'Invalid event data', err.issues), async);
    else if (err instanceof HttpError && err.expose) to(s, errorFrame(ref, 'HANDLER_ERROR', err.message), async);
    else {
      log.error({ err }, 'websocket event handler failed');
      to(s, errorFrame(ref, 'HANDLER_ERROR', 'Internal error'), async);
    }
    return { code, error: err };
  };

  /** `bin`: how a binary frame of an event that encodes its replies is answered (binary-events.ts), else null. */
  const reply = (
    s: Socket<any>,
    ref: number | undefined,
    value: unknown,
    async: boolean,
    to: Answer,
    bin: BinaryAnswer | null,
  ): EventOutcome => {
    if (ref === undefined) return bin === null ? EVENT_OK : replyBinary(s, bin, value, async, to);
    let json: string | undefined;
    try {
      json = encodeData(value);
    } catch (err) {
      return eventError(s, ref, err, async, to);
    }
    to(s, replyFrame(ref, json), async);
    return EVENT_OK;
  };

  const replyBinary = (s: Socket<any>, how: BinaryAnswer, value: unknown, async: boolean, to: Answer): EventOutcome => {
    let bytes: Uint8Array;
    try {
      bytes = how.encode(value);
      if (!(bytes instanceof Uint8Array)) throw new TypeError(`binary encode must return a Uint8Array, got ${typeof bytes}`);
    } catch (err) {
      return eventError(s, undefined, err, async, to);
    }
    answerBinary(s, how.code, bytes, async);
    return EVENT_OK;
  };

  /** Validation, the handler, the reply: after the onEvent hooks passed (`async`: they were async). */
  const handle = (
    s: Socket<any>,
    ev: CompiledEvent,
    data: unknown,
    ref: number | undefined,
    async: boolean,
    to: Answer,
    bin: BinaryAnswer | null,
  ) => {
    try {
      const checked = ev.validate ? ev.validate(data) : data;
      if (checked instanceof Promise)
        return checked
          .then((v) => ev.handler(s, v))
          .then(
            (v) => reply(s, ref, v, true, to, bin),
            (err) => eventError(s, ref, err, true, to),
          );
      const out = ev.handler(s, checked);
      if (out instanceof Promise)
        return out.then(
          (v) => reply(s, ref, v, true, to, bin),
          (err) => eventError(s, ref, err, true, to),
        );
      return reply(s, ref, out, async, to, bin);
    } catch (err) {
      return eventError(s, ref, err, async, to);
    }
  };

  /** One event frame, to its outcome (which only aroundEvent hooks read: event-outcome.ts). */
  const runEvent = (
    s: Socket<any>,
    name: unknown,
    data: unknown,
    ref: number | undefined,
    to: Answer,
    bin: BinaryAnswer | null,
  ): EventOutcome | Promise<EventOutcome> => {
    const ev = typeof name === 'string' ? events.get(name) : undefined;
    if (ev === undefined) {
      log.debug({ event: name }, 'websocket: unknown event');
      to(s, errorFrame(ref, 'UNKNOWN_EVENT', `Unknown event ${JSON.stringify(String(name))}`), false);
      return EVENT_UNKNOWN;
    }
    // onEvent hooks first (they may refuse); the rare async one defers the rest.
    let gate: Promise<void> | undefined;
    try {
      gate = onEvent.length === 0 ? undefined : runGate(onEvent, eventRefused, s, name, data);
    } catch (err) {
      return eventError(s, ref, err, false, to, true);
    }
    if (gate === undefined) return handle(s, ev, data, ref, false, to, bin);
    return gate.then(
      () => handle(s, ev, data, ref, true, to, bin),
      (err) => eventError(s, ref, err, true, to, true),
    );
  };
  const once = new OnceWindow(limits.idempotency, answer, log, shared);
  /** An event (a frame's, or a binary event's): through the aroundEvent hooks when there are any (event-outcome.ts). */
  const dispatchEvent = (
    s: Socket<any>,
    name: unknown,
    data: unknown,
    ref: number | undefined,
    to: Answer,
    bin: BinaryAnswer | null,
  ): void => {
    if (aroundEvent.length === 0 || typeof name !== 'string') return void runEvent(s, name, data, ref, to, bin);
    runAroundEvent(aroundEvent, s, name, () => runEvent(s, name, data, ref, to, bin), log);
  };

  /** An event frame, read short (event-frame.ts) or whole; with a key, at most once per key (once.ts). */
  const eventFrame = (s: Socket<any>, name: unknown, data: unknown, ref: number | undefined, key: unknown): void => {
    if (key === undefined) return dispatchEvent(s, name, data, ref, answer, null);
    once.handle(s, key, ref, (to) => dispatchEvent(s, name, data, ref, to, null));
  };

  const control: ControlHandler = (s, bytes) => {
    const text = decoder.decode(bytes);
    // The common event frame, read without parsing the frame around its data (event-frame.ts).
    const ev = readEventFrame(text);
    if (ev !== null) return eventFrame(s, ev.event, ev.data, ev.ref, ev.key);
    let frame: Record<string, unknown>;
    try {
      frame = JSON.parse(text);
    } catch {
      return answer(s, errorFrame(undefined, 'BAD_FRAME', 'Malformed JSON'), false);
    }
    const ref = readRef(frame.ref);
    switch (frame.type) {
      case 'subscribe': {
        const topics = frame.topics !== undefined ? frame.topics : [frame.topic];
        if (!Array.isArray(topics) || topics.length > MAX_TOPICS_PER_FRAME)
          return answer(s, errorFrame(ref, 'BAD_FRAME', 'topics must be an array of at most 1000 topics'), false);
        const history = readHistoryRequest(frame);
        if (typeof history === 'string') {
          warnBadInput(log, { ip: s.ip, since: frame.since, last: frame.last }, `websocket subscribe refused: ${history}`);
          for (const topic of topics) answer(s, deniedFrame(topic, ref, history), false);
          return;
        }
        for (const topic of topics) subscribeOne(s, topic, ref, history);
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
        return eventFrame(s, frame.event, frame.data, ref, frame.key);
      case 'ping':
        return answer(s, pongFrame(ref), false);
      case 'presence':
        return presence(s, frame.topic, ref);
      case 'reply': {
        // the client's answer to a server → client request (requests.ts)
        const bad = replyReceived(s, frame, log);
        return bad === null ? undefined : answer(s, bad, false);
      }
      default:
        return answer(s, errorFrame(ref, 'BAD_FRAME', `Unknown frame type ${JSON.stringify(String(frame.type))}`), false);
    }
  };
  // A binary event runs as an event frame without `ref` would (binary-events.ts), answered in bytes when it encodes.
  const event: RunEvent = (s, name, data, bin) => dispatchEvent(s, name, data, undefined, answer, bin);
  return { control, event };
}
