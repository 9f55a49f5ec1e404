// Retried requests, run once (docs/realtime.md, "Retried requests"). A client event frame with
// a `key` (the idempotency key the client keeps across reconnects: `live.request(event, data,
// { retries })`) runs its handler once per key within the route's window; a resend of the same
// key gets the first outcome, or waits for it while the handler still runs. Keys live in one
// KeyWindow per route (core/key-window.ts: arrival order, bounded, the oldest dropped first).
// In a cluster() the workers share the keys through the primary (SharedKeys,
// cluster/once-exchange.ts): a new key is claimed there first, so a resend that lands on another worker waits for, or gets, the first worker's outcome.
// Across servers, a route's `idempotency.store` (redisIdempotency() from @tachyon/redis) is
// the SharedKeys instead: every process claims in Redis.
import { KeyWindow, type KeyLimits } from '../core/key-window.ts';
import type { Logger } from '../core/logger.ts';
import { errorFrame } from './protocol.ts';
import type { Socket } from './socket.ts';

export interface IdempotencyOptions {
  /** Milliseconds a key is remembered after its first frame arrived (default 60 000). */
  window?: number;
  /** Most keys remembered per route; past it the oldest is forgotten (default 10 000). */
  keys?: number;
  /**
   * Keys shared by every server (and worker) that may see a client's resends: a resend that
   * reconnects to another server gets the first outcome too. `redisIdempotency({ url })` from
   * @tachyon/redis. Default: this process's memory (the cluster's primary in a cluster()).
   */
  store?: SharedKeys;
}

export interface CompiledIdempotency extends KeyLimits {
  store: SharedKeys | null;
}

/** The first outcome of a key: the answer frame and the ref it carries. */
export interface KeyOutcome {
  text: string;
  ref: number;
}

/**
 * Keys shared by the processes that may see one client's resends: the workers of a cluster()
 * (cluster/once-exchange.ts, lent to the hub by the App), or every server (a route's
 * `idempotency.store`). `scope` names the route.
 */
export interface SharedKeys {
  /**
   * Null: this process runs the key (it claimed it); else the first outcome, once it exists
   * (it waits while another runs it). A rejection: the keys cannot be reached (see `whenDown`).
   */
  claim(scope: string, key: string, limits: KeyLimits): Promise<KeyOutcome | null>;
  /** The handler of a key this process claimed settled: its outcome, for the other processes. */
  settle(scope: string, key: string, outcome: KeyOutcome): void;
  /**
   * What a claim that fails means: `'run'` (default) runs the handler here, once per key on
   * this server still, and logs; `'refuse'` runs nothing and answers `UNAVAILABLE`.
   */
  readonly whenDown?: 'run' | 'refuse';
  /** Optional: the app's logger, handed over when a route with this store is compiled. */
  useLogger?(logger: Logger): void;
}

/** Sends a protocol answer to a socket (control.ts's `answer`: corked when `async`, nothing once closed). */
export type Answer = (s: Socket<any>, text: string, async: boolean) => void;

// Printable ASCII without quotes and backslashes, like event names: the client's keys are
// `<4 random uint32s joined by ->.<ref>`, about 50 characters.
const KEY = /^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/;
/** Resends of one key that may wait for its handler at once (more are refused: a flood, not a reconnect). */
const MAX_WAITING = 16;

interface Run {
  /** Arrival of the first frame (ms). */
  at: number;
  /** The ref the outcome frame carries (the first frame's). */
  ref: number;
  /** The answer frame once the handler settled. */
  text: string | undefined;
  /** Resends waiting for it: socket and ref. */
  waiting: [Socket<any>, number][];
}

export function checkIdempotency(o: IdempotencyOptions | undefined, fail: (msg: string) => never): CompiledIdempotency {
  if (o !== undefined && (typeof o !== 'object' || o === null)) fail('idempotency must be { window?, keys?, store? }');
  const window = o?.window ?? 60_000;
  const keys = o?.keys ?? 10_000;
  if (!Number.isInteger(window) || window < 1 || window > 86_400_000) fail('idempotency.window must be an integer from 1 to 86400000 ms');
  if (!Number.isInteger(keys) || keys < 1 || keys > 1_000_000) fail('idempotency.keys must be an integer from 1 to 1000000');
  const store = o?.store ?? null;
  if (store !== null && (typeof store !== 'object' || typeof store.claim !== 'function' || typeof store.settle !== 'function'))
    fail('idempotency.store must be a key store with claim() and settle(), e.g. redisIdempotency({ url }) from @tachyon/redis');
  if (store?.whenDown !== undefined && store.whenDown !== 'run' && store.whenDown !== 'refuse')
    fail("idempotency.store.whenDown must be 'run' or 'refuse'");
  return { window, keys, store };
}

/**
 * The answer for another ref: every frame runEvent answers with (replyFrame, errorFrame) has
 * `"ref":N` as its second member, before any data, so the first match is the envelope's own.
 */
const withRef = (text: string, from: number, to: number) => (from === to ? text : text.replace(`"ref":${from}`, `"ref":${to}`));

export class OnceWindow {
  private readonly runs: KeyWindow<Run>;
  private readonly options: CompiledIdempotency;
  private readonly answer: Answer;
  private readonly log: Logger;
  private readonly shared: { keys: SharedKeys; scope: string } | null;
  /** Claims that failed (the shared keys unreachable): logged on the 1st, 2nd, 4th... */
  private failed = 0;

  constructor(options: CompiledIdempotency, answer: Answer, log: Logger, shared: { keys: SharedKeys; scope: string } | null = null) {
    this.options = options;
    this.runs = new KeyWindow<Run>(options, (run) => run.text !== undefined);
    this.answer = answer;
    this.log = log;
    this.shared = shared;
  }

  /** Keys remembered now (tests, metrics). */
  get size(): number {
    return this.runs.size;
  }

  /**
   * One keyed event frame: `run` is the event's handling, answering through the `Answer` it is
   * given; it is called for a new key only.
   */
  handle(s: Socket<any>, key: unknown, ref: number | undefined, run: (to: Answer) => void): void {
    if (typeof key !== 'string' || !KEY.test(key) || ref === undefined) {
      this.log.warn(
        { ip: s.ip, key: typeof key === 'string' ? key.slice(0, 140) : typeof key },
        'websocket event refused: bad idempotency key',
      );
      return this.answer(
        s,
        errorFrame(ref, 'BAD_FRAME', 'key must be 1-128 printable ASCII characters (no quotes or backslashes), with a ref'),
        false,
      );
    }
    const now = Date.now();
    const known = this.runs.find(key, now);
    if (known !== undefined) {
      if (known.text !== undefined) return this.answer(s, withRef(known.text, known.ref, ref), false);
      if (known.waiting.length >= MAX_WAITING)
        return this.answer(s, errorFrame(ref, 'BAD_FRAME', `too many resends of key ${key} in flight`), false);
      known.waiting.push([s, ref]);
      return;
    }
    const entry: Run = { at: now, ref, text: undefined, waiting: [] };
    this.runs.add(key, entry);
    const settle: Answer = (first, text, async) => {
      if (entry.text !== undefined) return;
      entry.text = text;
      this.answer(first, text, async);
      // Other sockets: outside their uWS callback, so always corked.
      for (const [w, r] of entry.waiting) this.answer(w, withRef(text, ref, r), true);
      entry.waiting = [];
    };
    const shared = this.shared;
    if (shared === null) return run(settle);
    // Claimed in the cluster first; whatever follows runs outside the uWS callback (corked answers).
    const { window, keys } = this.options;
    shared.keys.claim(shared.scope, key, { window, keys }).then(
      (outcome) => {
        if (outcome !== null) return settle(s, withRef(outcome.text, outcome.ref, ref), true);
        run((first, text) => {
          settle(first, text, true);
          shared.keys.settle(shared.scope, key, { text, ref });
        });
      },
      (err: unknown) => {
        const refuse = shared.keys.whenDown === 'refuse';
        const n = ++this.failed;
        if ((n & (n - 1)) === 0)
          this.log.warn(
            { err, key, failed: n },
            refuse
              ? 'websocket: the shared idempotency keys cannot be reached; keyed events refused (UNAVAILABLE)'
              : 'websocket: the shared idempotency keys cannot be reached; keyed events run here',
          );
        if (!refuse) return run((first, text) => settle(first, text, true));
        // Nothing ran: the key is forgotten here, so a later resend tries again.
        this.runs.delete(key);
        settle(s, errorFrame(ref, 'UNAVAILABLE', 'the idempotency store cannot be reached: not run, try again'), true);
      },
    );
  }
}
