// @tachyon/client: the browser/Node realtime client for Tachyon's WebSocket protocol
// (docs/protocol.md). Zero dependencies; one closure per connection so that the
// minifier can shorten every internal name. Budget: 3 KB min+gzip (docs/client.md, Size); the
// SSE fallback is a separate module, imported only when a connection falls back to it.

import type { SseSocket } from './sse.ts';
import { presenceListener } from './presence.ts';
import type { LiveFor } from './contract.ts';
import {
  ClientError,
  type ClientOptions,
  type EventMap,
  type HandlerMap,
  type Live,
  type RequestMap,
  type RequestOptions,
  type Status,
  type StatusInfo,
  type SubscribeInfo,
  type SubscribeOptions,
  type Unsubscribe,
  type WebSocketConstructor,
  type WebSocketLike,
} from './api.ts';
export * from './api.ts';
export type { ContractLive, LiveFor, TopicEvents, WsContract } from './contract.ts';
export { PRESENCE_EVENTS, type PresenceChange, type PresenceMember } from './presence.ts';

interface Pending {
  /** Resolves the request. */
  y: (v: any) => void;
  /** Rejects the request. */
  n: (e: ClientError) => void;
  /** Event name (for errors). */
  e: string;
  /** Timeout timer. */
  t: ReturnType<typeof setTimeout> | undefined;
  /** Sent on the current socket (as opposed to waiting in the queue). */
  s: boolean;
  /** The frame, and the resends left after a lost connection (`retries`). */
  f: string;
  k: number;
}

type Listener = [(event: string, data: unknown) => void, ((e: ClientError) => void) | undefined, ((i: SubscribeInfo) => void) | undefined];

/** A topic's listeners and the ref of the last subscribe frame sent for it. */
interface TopicEntry {
  r: number;
  l: Set<Listener>;
  /** History topics: the last position seen (offset, epoch), and whether the pending subscribe sent it (0: no). */
  o?: number;
  p?: string;
  v?: boolean | 0;
  /** `last` asked by the first listener, for a subscribe sent later (the client was offline). */
  n?: number;
  /** Subscribes answered `unavailable` in a row: the backoff's attempt for this topic. */
  a: number;
}

type Frame = string | ArrayBufferLike | ArrayBufferView | Blob;

// `[{"topic"…` is a batch of events (servers that coalesce publishes).
const PROTOCOL_FRAME = /^\[?\{"(?:topic|event|type)"/;

/**
 * Opens a realtime connection. `E` maps server → client event names to their data;
 * `R` maps client → server event names to `{ data; reply }`, `H` the server → client
 * requests this client answers (`handle`) the same way. Or, inferred from the server's
 * type: `connect<WsContract<typeof app, '/live'>>(url)` (contract.ts).
 */
export function connect<E = EventMap, R = RequestMap, H = HandlerMap>(
  url: string | URL | (() => string | URL),
  options: ClientOptions = {},
): LiveFor<E, R, H> {
  const {
    WebSocket: WS = globalThis.WebSocket as unknown as WebSocketConstructor,
    protocols,
    transports = ['websocket'],
    fallbackTimeout = 5000,
    probeInterval = 60_000,
    minDelay = 250,
    maxDelay = 10_000,
    factor = 2,
    maxRetries = Infinity,
    maxQueue = 100,
    timeout = 10_000,
    onError = (e: unknown) => console.error(e),
  } = options;
  // Node < 22 has no global WebSocket: without this check the first connect fails later with
  // "WS is not a constructor", which names neither the cause nor the fix.
  if (!transports.length || transports.some((t) => t !== 'websocket' && t !== 'sse'))
    throw new TypeError("@tachyon/client: transports must list 'websocket' and/or 'sse'");
  if (transports.includes('websocket') && typeof WS !== 'function')
    throw new TypeError('@tachyon/client: no global WebSocket (Node.js < 22): pass connect(url, { WebSocket })');
  /** The transport in use: the first one, then the next each time one fails before it opens. */
  let transport = 0;
  let openTimer: ReturnType<typeof setTimeout> | undefined;
  /** The SSE module, once asked for (import() on the first fall back). */
  let sse: Promise<{ SseSocket: typeof SseSocket }> | undefined;

  let status: Status = 'connecting';
  let ws: WebSocketLike | undefined;
  let ref = 0;
  /** Random prefix of this client's idempotency keys (made on the first request with `retries`). */
  let keyPrefix: string | undefined;
  let attempt = 0;
  let openedAt = 0;
  let retry: ReturnType<typeof setTimeout> | undefined;
  /** Frames waiting for an open socket: [frame, request ref or 0]. */
  let queue: [Frame, number][] = [];
  const topics = new Map<string, TopicEntry>();
  /** onEvent listeners: [event, listener] (few per client: one loop beats a map of sets in bytes). */
  const direct = new Set<[string, (data: unknown) => void]>();
  const raw = new Set<(data: string | ArrayBuffer) => void>();
  const statusFns = new Set<(status: Status, info: StatusInfo) => void>();
  const pending = new Map<number, Pending>();
  /** Handlers of server → client requests, by event. */
  const handlers = new Map<string, (data: any) => unknown>();
  let readyYes!: () => void;
  let readyNo!: (e: ClientError) => void;
  const ready = new Promise<void>((y, n) => {
    readyYes = y;
    readyNo = n;
  });
  ready.catch(() => {}); // nobody awaiting `ready` is fine

  const report = (e: unknown) => {
    try {
      onError(e);
    } catch {}
  };
  /** Runs a listener; its exceptions go to onError, never into the socket handler. */
  const call = (f: (...a: any[]) => void, ...args: unknown[]) => {
    try {
      f(...args);
    } catch (e) {
      report(e);
    }
  };
  const add = <T>(set: Set<T>, item: T): Unsubscribe => {
    set.add(item);
    return () => void set.delete(item);
  };
  const isOpen = () => status === 'open';
  /**
   * The delay before attempt `n` (from 0): full jitter below minDelay × factor^n, capped at
   * maxDelay. `slow` (1: the server said 4429, "too slow") waits as if 4 attempts had failed,
   * and at least half that cap: (random + 1) × cap / 2.
   */
  const backoff = (n: number, slow = 0) =>
    Math.round(((Math.random() + slow) * Math.min(maxDelay, minDelay * factor ** Math.max(n, 4 * slow))) / (1 + slow));
  const send = (frame: object) => ws!.send(JSON.stringify(frame));
  /**
   * Subscribes one topic on its own frame: from its position when it has one (history: the
   * server replays what followed it), else with `last` (undefined: left out of the JSON).
   */
  const sub = (topic: string, t: TopicEntry) =>
    send({
      type: 'subscribe',
      topic,
      ...((t.v = t.p !== undefined) ? { since: { offset: t.o, epoch: t.p } } : { last: t.n }),
      ref: (t.r = ++ref),
    });
  const setStatus = (s: Status, info: StatusInfo) => {
    status = s;
    for (const f of statusFns) call(f, s, info);
  };

  /** Sends now when open, else queues; false when the queue is full or the client closed. */
  const out = (frame: Frame, r = 0): boolean =>
    isOpen() ? (ws!.send(frame), true) : status !== 'closed' && queue.length < maxQueue && queue.push([frame, r]) > 0;

  /** Takes request `r` out (its timer, its frame if still queued) to settle it; undefined if unknown. */
  const take = (r: number) => {
    const p = pending.get(r);
    if (p) {
      pending.delete(r);
      clearTimeout(p.t);
      if (!p.s) queue = queue.filter((q) => q[1] !== r);
    }
    return p;
  };
  /** Settles request `r` with an error. */
  const fail = (r: number, e: ClientError) => take(r)?.n(e);

  /** Sends a frame that expects an answer with the same ref. */
  const ask = (frame: { type: string; event?: string; data?: unknown; topic?: string }, o?: RequestOptions) =>
    new Promise<any>((y, n) => {
      const e = frame.event ?? frame.type;
      const ms = o?.timeout ?? timeout;
      const k = o?.retries ?? 0;
      if (status === 'closed') return n(new ClientError('CLOSED', `Cannot send "${e}": the client is closed`, { event: e }));
      const r = ++ref;
      // 128 random bits: another client cannot guess a key and read its outcome.
      const text = JSON.stringify({
        ...frame,
        ref: r,
        key: k ? (keyPrefix ??= crypto.getRandomValues(new Uint32Array(4)).join('-')) + '.' + r : undefined,
      });
      pending.set(r, {
        y,
        n,
        e,
        s: isOpen(),
        f: text,
        k,
        t:
          ms > 0 && ms < 2 ** 31
            ? setTimeout(() => fail(r, new ClientError('TIMEOUT', `Request "${e}" timed out after ${ms} ms`, { event: e })), ms)
            : undefined,
      });
      // Not open and the queue full (closed was answered above): out() keeps nothing.
      if (!out(text, r)) fail(r, new ClientError('QUEUE_FULL', `Cannot send "${e}": offline queue is full (${maxQueue})`, { event: e }));
    });

  /** Every frame from the server. */
  const onFrame = (d: string | ArrayBuffer) => {
    let m: any;
    if (typeof d === 'string' && PROTOCOL_FRAME.test(d)) {
      try {
        m = JSON.parse(d);
      } catch {}
    }
    if (!m) {
      for (const f of raw) call(f, d);
      return;
    }
    for (const e of Array.isArray(m) ? m : [m]) if (e && typeof e === 'object') onMessage(e);
  };

  /**
   * `{"type":"request","id":…,"event":…,"data":…}` from the server (protocol v1.2): answered on
   * the socket it came from, or dropped if that connection is gone (the server failed it with CLOSED).
   */
  const onRequest = (m: any) => {
    const s = ws;
    const h = handlers.get(m.event);
    const reply = (r: object) => s === ws && isOpen() && s!.send(JSON.stringify({ type: 'reply', id: m.id, ...r }));
    if (!h) return reply({ error: { code: 'NO_HANDLER', message: `No handler for "${m.event}"` } });
    // A reply that is not JSON (a BigInt, a cycle) throws in reply(): CLIENT_ERROR with that message.
    new Promise((y) => y(h(m.data)))
      .then((data) => reply({ data }))
      .catch((e) => reply({ error: { code: 'CLIENT_ERROR', message: String(e?.message ?? e) } }));
  };

  const onMessage = (m: any) => {
    const type = m.type;
    if (type === 'request') return onRequest(m);
    const t = topics.get(m.topic);
    if (type === undefined) {
      if (m.topic === undefined) {
        for (const [e, f] of direct) if (e === m.event) call(f, m.data);
      } else if (t) {
        // History topics: offsets grow by one. In this epoch, one already seen is a duplicate (a
        // replay overlapping live traffic); one past the next is a gap (the bus lost some): ask
        // for what followed the position, as after a reconnect (the replay brings this one too).
        const o = m.offset;
        if (typeof o === 'number') {
          if (m.epoch === t.p && o !== t.o! + 1) return o > t.o! && !t.v && sub(m.topic, t);
          t.o = o;
          t.p = m.epoch;
        }
        // A topic message names its event (docs/protocol.md): listeners are typed with a string.
        // Without one it is a position alone (where this client's own publish went).
        if (typeof m.event === 'string') for (const [f] of t.l) call(f, m.event, m.data);
      }
      return;
    }
    if (type === 'reply' || type === 'pong') take(m.ref)?.y(m.data);
    else if (type === 'error') {
      const p = take(m.ref);
      const err = new ClientError(m.code, m.message, { issues: m.issues, event: p?.e });
      if (p) p.n(err);
      else report(err);
    } else if (!t || t.r !== m.ref) {
      // An answer to an older subscribe of this topic (unsubscribed, or resubscribed since), or `unsubscribed`: nothing to do.
    } else if (type === 'denied') {
      // `unavailable`: the server could not read the topic's history for now (its store is
      // reconnecting). Not a refusal: the topic stays, with its listeners and position, and
      // subscribes again after the reconnect's backoff. Not once its last listener left (an
      // entry is never reused: a new subscribe makes another), nor when a reconnect
      // resubscribed it meanwhile (another ref), nor while offline (the reconnect will).
      if (m.reason === 'unavailable') return setTimeout(() => t.l.size && t.r === m.ref && isOpen() && sub(m.topic, t), backoff(t.a++));
      topics.delete(m.topic);
      const err = new ClientError('DENIED', `Subscription to "${m.topic}" denied${m.reason ? `: ${m.reason}` : ''}`, { topic: m.topic });
      let hooked = false;
      for (const [, h] of t.l) if (h) (hooked = true), call(h, err);
      if (!hooked) report(err);
    } else if (type === 'subscribed') {
      const info: SubscribeInfo = { recovering: !!t.v, recovered: !!m.recovered };
      // History topics: the position now (what followed it is live traffic).
      if (typeof m.offset === 'number') (t.o = info.offset = m.offset), (t.p = info.epoch = m.epoch);
      t.v = t.a = 0; // recovered (or not) now; the next `unavailable` waits from minDelay again
      for (const [, , h] of t.l) if (h) call(h, info);
    }
  };

  /** A terminal close: reject everything, never reconnect. */
  const shutdown = (code: number, reason: string) => {
    clearTimeout(retry);
    clearTimeout(openTimer);
    const s = ws;
    ws = undefined;
    status = 'closed';
    s?.close(1000);
    queue = [];
    const e = new ClientError('CLOSED', `Connection closed (code ${code}${reason ? `: ${reason}` : ''})`);
    for (const [r] of pending) fail(r, e); // a Map walk survives deleting the entry it is on
    readyNo(e);
    setStatus('closed', { code, reason });
  };

  const lost = (code: number, reason: string) => {
    ws = undefined;
    // A connection that stayed open 5 s resets the backoff.
    if (openedAt && Date.now() - openedAt >= 5000) attempt = 0;
    openedAt = 0;
    // Close codes after which the client does not reconnect (docs/protocol.md; the server's TERMINAL_CLOSE_CODES).
    if ([1008, 4401, 4403].includes(code) || attempt >= maxRetries) return shutdown(code, reason);
    // Requests already sent can no longer get their reply: the outcome is unknown. Those with
    // retries left go again, first in the queue, with their key: the server runs them once.
    for (const [r, p] of pending) {
      if (p.s)
        p.k-- > 0
          ? ((p.s = false), queue.push([p.f, r]))
          : fail(r, new ClientError('CONNECTION_LOST', `Connection lost before the reply to "${p.e}" (${code})`, { event: p.e }));
    }
    const delay = backoff(attempt, +(code === 4429));
    attempt++;
    retry = setTimeout(() => {
      try {
        open();
      } catch (e) {
        report(e); // e.g. a `url` function that threw: try again later
        lost(1006, '');
      }
    }, delay);
    setStatus('reconnecting', { code, reason, delay, attempt });
  };

  /** The WebSocket did not get through: the next transport, at once (not a failed attempt). */
  const fallBack = (): boolean => {
    if (transport + 1 >= transports.length || status === 'closed') return false;
    transport++;
    open();
    return true;
  };

  /**
   * On SSE, a WebSocket that the probe opened (sse.ts, every `probeInterval` ms) becomes the
   * connection like a reconnect without the offline gap: topics resubscribe from their positions.
   * Declined while a request awaits its reply on SSE (the reply would be lost). Taken: the SSE
   * socket runs `p.onopen` (status stays open), then closes itself.
   */
  const up = (p: WebSocketLike): boolean => {
    for (const x of pending.values()) if (x.s) return false;
    transport = 0;
    wire(p, 'websocket');
    return true;
  };

  const open = () => {
    const target = typeof url === 'function' ? url() : url;
    const kind = transports[transport]!;
    ws = undefined; // a socket being replaced is ignored from now on
    if (kind === 'websocket') return wire(new WS(target, protocols), kind);
    const t = transport;
    (sse ??= import('./sse.ts')).then(
      (m) => {
        // closed, or another attempt began while the module loaded
        if (status !== 'closed' && transport === t && ws === undefined)
          wire(
            new m.SseSocket(target, {
              every: t > 0 ? probeInterval : 0,
              wait: fallbackTimeout,
              ws: () => new WS(typeof url === 'function' ? url() : url, protocols),
              up,
              report,
            }),
            kind,
          );
      },
      (e) => {
        sse = undefined;
        report(e);
        lost(1006, '');
      },
    );
  };

  /** Makes `s` the connection (a probe's WebSocket that already opened included: status stays open). */
  const wire = (s: WebSocketLike, kind: 'websocket' | 'sse') => {
    ws = s;
    s.binaryType = 'arraybuffer';
    let opened = false;
    clearTimeout(openTimer);
    if (kind === 'websocket' && transport + 1 < transports.length)
      openTimer = setTimeout(() => {
        if (s !== ws || opened) return;
        fallBack(); // replaces ws first: the old socket's close is ignored
        s.close();
      }, fallbackTimeout);
    s.onopen = () => {
      if (s !== ws) return;
      opened = true;
      clearTimeout(openTimer);
      openedAt = Date.now();
      const was = status;
      status = 'open';
      // One batch frame for every topic (per 1000), then the offline queue, in order. Topics
      // with a known position resubscribe one by one, with it: the server replays what was missed.
      if (topics.size) {
        const r = ++ref;
        const all: string[] = [];
        for (const [name, t] of topics) {
          if (t.p !== undefined || t.n) sub(name, t);
          else {
            t.r = r;
            all.push(name);
          }
        }
        // 1000: the most topics the server takes in one subscribe frame.
        for (let i = 0; i < all.length; i += 1000) send({ type: 'subscribe', topics: all.slice(i, i + 1000), ref: r });
      }
      const q = queue;
      queue = [];
      for (const [frame, r] of q) {
        const p = pending.get(r);
        if (p) p.s = true;
        s.send(frame);
      }
      readyYes();
      if (was !== 'open') setStatus('open', {});
    };
    s.onmessage = (ev: { data: string | ArrayBuffer }) => {
      if (s === ws) onFrame(ev.data);
    };
    s.onclose = (ev: { code: number; reason: string }) => {
      if (s !== ws) return;
      clearTimeout(openTimer);
      if (!opened && kind === 'websocket' && fallBack()) return;
      lost(ev.code, ev.reason);
    };
  };

  const listen = (topic: string, f: (event: string, data: unknown) => void, o?: SubscribeOptions): Unsubscribe => {
    let t = topics.get(topic);
    if (!t) {
      topics.set(topic, (t = { r: 0, l: new Set(), n: o?.last, a: 0 }));
      // `last` counts on the first frame only: a reconnect resumes from the position instead.
      if (isOpen()) sub(topic, t);
    }
    const entry: Listener = [f, o?.onDenied, o?.onSubscribed];
    t.l.add(entry);
    return () => {
      if (t!.l.delete(entry) && !t!.l.size && topics.get(topic) === t) {
        topics.delete(topic);
        if (isOpen()) send({ type: 'unsubscribe', topic });
      }
    };
  };

  open();

  const live: Live = {
    get status() {
      return status;
    },
    ready,
    subscribe: listen,
    on: (topic, event, listener, o) => listen(topic, (e, d) => e === event && listener(d), o),
    onEvent: (event, listener) => add(direct, [event, listener as (data: unknown) => void]),
    // Cast: the typed signature has a defaulted type parameter (C) that no implementation can name.
    request: ((event: string, data?: unknown, o?: RequestOptions) => ask({ type: 'event', event, data }, o)) as Live['request'],
    handle(event, handler) {
      handlers.set(event, handler);
      return () => void (handlers.get(event) === handler && handlers.delete(event));
    },
    emit: (event: string, data?: unknown) => out(JSON.stringify({ type: 'event', event, data })),
    sendRaw: (data) => out(data),
    onMessage: (listener) => add(raw, listener),
    onStatus: (listener) => add(statusFns, listener),
    ping(o) {
      const t = Date.now();
      return ask({ type: 'ping' }, o).then(() => Date.now() - t);
    },
    presence: (topic: string, o?: RequestOptions) => ask({ type: 'presence', topic }, o),
    onPresence: (topic, listener, o) => listen(topic, presenceListener(listener), o),
    close() {
      if (status !== 'closed') shutdown(1000, '');
    },
  };
  return live as LiveFor<E, R, H>;
}
