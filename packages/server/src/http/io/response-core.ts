// The response's state machine and its writes to uWS, shared by every response: status and
// headers are buffered in JS and written in one corked burst; every write checks the state,
// so nothing touches the uWS object after the response ended or the client left. The public
// API (send, json, stream, cookies…) is in response.ts, on top of this.
import type { BodyReader } from './body.ts';
// The states and deadline markers, the op codes, the shared types (response-states.ts).
import { ABORTED, DEVELOPMENT, DONE, OPEN, SENDING, SETTLED, SHUT_DOWN, STREAMING, TIMED_OUT } from './response-states.ts';
import { OP_BEGIN, OP_END, OP_END_STREAM, OP_TRY_END, OP_WRITE } from './response-states.ts';
import type { Body, ResponseRequest, Stringify } from './response-states.ts';
import type { Compression } from '../compression.ts';
import { shareable, type DedupTable } from '../dedup.ts';
import { RequestTimeoutError } from '../errors.ts';
import type { Settings } from '../../core/settings.ts';
import { statusLine, statusLineBytes } from '../status.ts';
import { lowerCaseKey } from './header-checks.ts';
import { asciiText, type UwsResponse } from '../../uws/index.ts';

/** Hooks the dispatcher gives each response: bookkeeping and the route's error path. @internal */
export interface ResponseHooks {
  settled(res: ResponseCore): void;
  fail(err: unknown, req: ResponseRequest, res: ResponseCore): void;
  readonly compression: Compression | null;
  readonly dedup: DedupTable | null;
  /** The route's timeout in ms (for the timeout's log line). */
  readonly timeout?: number;
  /** The route's onSend hooks (http/hooks.ts): called by end() in place of the write; they call `_finishEnd`. */
  readonly onSend?: ((req: any, res: any, body: Body | undefined) => void) | null;
  /** The route's compiled serializer (serialize: 'compiled'), or null/absent for JSON.stringify. */
  readonly stringify?: Stringify | null;
}

// cork() runs its callback synchronously, so one static thunk and these slots replace a
// closure per corked write. They stay beside the class: _corked() assigns them, and a module
// cannot assign another module's bindings (a holder object would add a load per write).
let corkRes: ResponseCore | null = null;
let corkOp = 0;
let corkArg: Body | undefined;
let corkResult = false;
let corkLength: number | undefined;
function corkThunk(): void {
  corkResult = corkRes!._op(corkOp, corkArg);
}
/**
 * The state and the writes of a response. Never constructed itself: Response (response.ts)
 * takes these methods through its prototype and sets the fields with `_init`, as a base
 * class. (A derived class cost about 290 instructions per response on the pipelined GET:
 * TurboFan inlines `new Response(…)` into the route's callback, but not the base class's
 * constructor behind `super()`, which then ran through V8's generic construct stub.)
 */
export abstract class ResponseCore {
  /** @internal */ declare _uws: UwsResponse;
  /** @internal */ declare _req: ResponseRequest;
  /** @internal */ declare _settings: Settings;
  /** @internal */ declare _hooks: ResponseHooks;
  /** @internal */ declare _status: number;
  /** @internal */ declare _headers: string[] | null;
  /**
   * The bytes of `_headers` while it holds exactly the lines of one prepared set (res.setHeaders()
   * on a response without headers); null once anything else changes them. @internal
   */
  declare _wire: readonly ArrayBuffer[] | null;
  /** @internal */ declare _state: number;
  /** @internal */ declare _sync: boolean;
  /** @internal */ declare _head: boolean;
  /** @internal */ declare _tls: boolean;
  /** @internal */ declare _reader: BodyReader | null;
  /** @internal */ declare _deadline: number;
  /** res.stream(…, { shutdown: 'finish' }): a finite body that shutdown lets finish. @internal */ declare _finishOnShutdown: boolean;
  /** What the chain returned, while the timeout clock runs (see _startDeadline). @internal */ declare _chain: Promise<void> | undefined;
  /** @internal */ declare _drain: (() => void) | null;
  /** @internal */ declare _remote: string | undefined;
  /** Set while this response leads a deduplicated group. @internal */ declare _dedupKey: string | null;
  /** performance.now() at the start, when an onResponse hook wants the duration (else 0: nothing is counted). @internal */
  declare _t0: number;
  /** Body bytes written, counted only when `_t0` is set. @internal */ declare _bytes: number;
  /** The onSend hooks are running (they may still set headers): an end() meanwhile writes directly. @internal */ declare _inSend: boolean;
  /** Where the in-flight tracker (http/tracker.ts) holds this response, -1 when it does not. @internal */ declare _inflightAt: number;

  /** Sets every field, always all of them in this order: every response has the same hidden class from birth. @internal */
  _init(uws: UwsResponse, settings: Settings, hooks: ResponseHooks, head: boolean, tls: boolean): void {
    this._uws = uws;
    this._req = undefined as never; // _bind() sets it, once the request exists
    this._settings = settings;
    this._hooks = hooks;
    this._status = 200;
    this._headers = null;
    this._wire = null;
    this._state = OPEN;
    this._sync = true;
    this._head = head;
    this._tls = tls;
    this._reader = null;
    this._deadline = 0;
    this._finishOnShutdown = false;
    this._chain = undefined;
    this._drain = null;
    this._remote = undefined;
    this._dedupKey = null;
    this._t0 = 0;
    this._bytes = 0;
    this._inSend = false;
    this._inflightAt = -1;
  }

  get statusCode(): number {
    return this._status;
  }

  /** True once status and headers are on the wire. */
  get headersSent(): boolean {
    return this._state !== OPEN;
  }

  /** True once the response has ended or the client has gone. */
  get finished(): boolean {
    return this._state >= DONE;
  }

  /** True when the client went away before the response was complete. */
  get aborted(): boolean {
    return this._state === ABORTED;
  }

  status(code: number): this {
    if (this._state !== OPEN) return this._late('res.status()');
    statusLine(code); // validates the code now rather than at write time
    this._status = code;
    return this;
  }

  /**
   * A write after the response was answered (or started streaming): a bug in the app, such as
   * res.json() twice, a header after the body, or a value returned after answering
   * (send-value.ts). Throws in development (NODE_ENV !== 'production'), logs a warning with
   * the route in production; silent after the client left, after a
   * shutdown ended the stream, or after the request timed out (the app could not know).
   * @internal
   */
  _late(what: string): this {
    if (this._state === ABORTED || this._deadline === TIMED_OUT || this._deadline === SHUT_DOWN) return this;
    const req = this._req;
    const message = `${what} after the response was ${this._state === DONE ? 'sent' : 'started'} (${req.method} ${req.route}): a response is answered once, and its headers go out with the first byte of the body`;
    if (DEVELOPMENT) throw new Error(message);
    this._settings.logger.warn({ method: req.method, route: req.route, url: (req as { url?: string }).url }, `${message}; ignored`);
    return this;
  }

  /** A header set so far (case-insensitive name), or undefined. The first line when there are several. */
  getHeader(name: string): string | undefined {
    const h = this._headers;
    if (h === null) return undefined;
    const key = lowerCaseKey(name);
    for (let i = 0; i < h.length; i += 2) if (h[i] === key) return h[i + 1];
    return undefined;
  }

  /** @internal */
  _push(key: string, value: string): void {
    // uWS computes framing itself; a second Content-Length would corrupt the response.
    if (key === 'content-length' || key === 'transfer-encoding') return;
    this._wire = null;
    (this._headers ??= []).push(key, value);
  }

  /**
   * Sets a checked header (lower-case key, safe value), replacing earlier lines of that name:
   * the first one in place, later ones removed. Nothing moves and nothing is allocated when
   * the header is new or set once. @internal
   */
  _set(key: string, value: string): void {
    const h = this._headers;
    if (h !== null) {
      for (let i = 0; i < h.length; i += 2) {
        if (h[i] !== key) continue;
        this._wire = null;
        h[i + 1] = value;
        for (let j = h.length - 2; j > i; j -= 2) if (h[j] === key) h.splice(j, 2);
        return;
      }
    }
    this._push(key, value);
  }

  /** Removes every line of a header (lower-case key). @internal */
  _remove(key: string): void {
    const h = this._headers;
    if (h === null) return;
    for (let i = h.length - 2; i >= 0; i -= 2) {
      if (h[i] !== key) continue;
      h.splice(i, 2);
      this._wire = null;
    }
  }

  /** Replaces status and headers with a copy of a prepared list (dedup replay, precomputed headers). @internal */
  _adoptHeaders(status: number, headers: readonly string[]): void {
    this._status = status;
    this._headers = headers.slice();
    this._wire = null;
  }

  /** The body is being compressed off-thread: no more writes, still abortable. @internal */
  _beginSending(): void {
    this._state = SENDING;
  }

  /** Resolves when the socket can take more, or the response is finished. */
  drained(): Promise<void> {
    if (this._state !== STREAMING) return Promise.resolve();
    return new Promise((resolve) => {
      const prev = this._drain;
      this._drain = prev ? () => (prev(), resolve()) : resolve;
    });
  }

  /** The leader of a deduplicated group finished: share its response (captured before compression). @internal */
  _share(body: Body | undefined): void {
    const key = this._dedupKey!;
    this._dedupKey = null;
    const length = body === undefined ? 0 : byteLength(body);
    const shared = shareable(this._headers, length)
      ? { status: this._status, headers: this._headers ? this._headers.slice() : [], body }
      : null;
    this._hooks.dedup!.settle(key, shared);
  }

  /** The leader will not produce a shareable response: waiting requests run the handler themselves. */
  /** @internal */
  _releaseDedup(): void {
    const key = this._dedupKey;
    if (key === null) return;
    this._dedupKey = null;
    this._hooks.dedup!.settle(key, null);
  }

  /** @internal */
  _corked(op: number, arg: Body | undefined): boolean {
    if (this._sync) return op === OP_END ? this._opEnd(arg) : this._op(op, arg);
    corkRes = this;
    corkOp = op;
    corkArg = arg;
    this._uws.cork(corkThunk);
    // Clear the slots: a module-level reference would keep this response (and its body)
    // alive until the next async write, long after the request ended.
    corkRes = null;
    corkArg = undefined;
    return corkResult;
  }

  /** @internal */
  _op(op: number, arg: Body | undefined): boolean {
    if (op === OP_END) return this._opEnd(arg);
    const u = this._uws;
    if (this._t0 !== 0) this._countBytes(op, arg);
    if (op === OP_WRITE) return u.write(arg!);
    if (op === OP_TRY_END) {
      const [ok, done] = u.tryEnd(arg!, corkLength!);
      if (done) this._settle(DONE);
      return ok;
    }
    if (op === OP_END_STREAM) {
      // Never end(…, true) here: uWS would write a Connection: close header after the body
      // chunks it already sent, corrupting the response (seen when a shutdown ended SSE
      // streams). OP_BEGIN sent that header already when the connection should close.
      if (this._head) this._endWithoutBody(undefined);
      else u.end(undefined, false);
      this._settle(DONE);
      return true;
    }
    this._writeHead();
    if (op === OP_BEGIN) {
      if (!this._head && this._closeAfter()) u.writeHeader('connection', 'close');
      this._state = STREAMING;
      this._deadline = 0; // streams are exempt from the request timeout
      u.onWritable(() => {
        const wake = this._drain;
        this._drain = null;
        wake?.();
        return true;
      });
      return true;
    }
    const status = this._status; // OP_END_HEAD
    this._endWithoutBody(status === 204 || status === 304 || status < 200 ? undefined : corkLength);
    this._settle(DONE);
    return true;
  }

  /**
   * OP_END, what nearly every response does: a method of its own, small enough for V8 to
   * inline where the response ends (_op, with every kind of write, is too large). @internal
   */
  _opEnd(arg: Body | undefined): boolean {
    if (this._t0 !== 0) this._countBytes(OP_END, arg);
    this._writeHead();
    const status = this._status;
    if (status === 204 || status === 304 || status < 200) this._endWithoutBody(undefined);
    else if (this._head) this._endWithoutBody(arg === undefined ? 0 : byteLength(arg));
    else this._uws.end(arg, this._closeAfter());
    this._settle(DONE);
    return true;
  }

  /** Status line (when not 200) and header lines, before the body or the end. @internal */
  _writeHead(): void {
    const u = this._uws;
    if (this._status !== 200) u.writeStatus(statusLineBytes(this._status));
    const w = this._wire;
    if (w !== null) {
      for (let i = 0; i < w.length; i += 2) u.writeHeader(w[i]!, w[i + 1]!);
      return;
    }
    const h = this._headers;
    if (h !== null) for (let i = 0; i < h.length; i += 2) u.writeHeader(h[i]!, h[i + 1]!);
  }

  /** Body bytes for the access log (HEAD and bodiless statuses send none). @internal */
  _countBytes(op: number, arg: Body | undefined): void {
    const status = this._status;
    if (this._head || status === 204 || status === 304 || status < 200) return;
    if (op === OP_TRY_END) this._bytes = corkLength ?? 0;
    else if ((op === OP_END || op === OP_WRITE) && arg !== undefined) this._bytes += byteLength(arg);
  }

  /**
   * Ends without a body. uWS writes `Content-Length: 2^63` when given `undefined` as the
   * length, so an unknown length must mean calling it with no argument at all.
   * @internal
   */
  _endWithoutBody(length: number | undefined): void {
    const close = this._closeAfter();
    if (length !== undefined) this._uws.endWithoutBody(length, close);
    else {
      if (close) this._uws.writeHeader('connection', 'close');
      this._uws.endWithoutBody();
    }
  }

  /**
   * Close the connection after this response when shutting down, or when the request body has
   * not fully arrived (unread, or refused with 413): keeping the connection would mean reading
   * and discarding whatever the client still sends, for as long as it trickles.
   * @internal
   */
  _closeAfter(): boolean {
    return this._settings.state.draining || (this._reader !== null && !this._reader.ended);
  }

  /** @internal */
  _settle(state: number): void {
    this._state = state;
    this._releaseDedup();
    this._reader?.detach(state === ABORTED);
    const wake = this._drain;
    this._drain = null;
    wake?.();
    this._hooks.settled(this);
  }

  /** uWS onAborted: the client left. @internal */
  _abort(): void {
    if (this._state >= DONE) return;
    this._settle(ABORTED);
    this._req._abortSignal(new Error('Client closed the connection'));
  }

  /** Pairs the response with its request (created after it). @internal */
  _bind(req: ResponseRequest): void {
    this._req = req;
  }

  /** The uWS callback returned: writes from now on must be corked. @internal */
  _leaveCallback(): void {
    this._sync = false;
  }

  /**
   * Starts the request timeout clock. `chain`: what the route's chain returned, kept so the
   * timeout's log line can say whether the handler's promise was still pending. @internal
   */
  _startDeadline(ms: number, chain: Promise<void> | undefined): void {
    this._deadline = Date.now() + ms;
    this._chain = chain;
  }

  /** Timeout sweep: past the deadline and still unanswered, the request fails with 503. @internal */
  _expireIfDue(now: number): void {
    if (this._deadline <= 0 || this._deadline > now || this._state !== OPEN) return;
    this._deadline = 0;
    const chain = this._chain;
    this._chain = undefined;
    if (chain === undefined || chain === SETTLED) return this._timeOut(false);
    // One microtask tells whether the chain's promise has settled (rare path: timeouts only).
    Promise.race([chain.then(() => false), SETTLED.then(() => true)]).then(
      (pending) => this._timeOut(pending),
      () => this._timeOut(false),
    );
  }

  /** @internal */
  _timeOut(pending: boolean): void {
    if (this._state !== OPEN) return;
    this._deadline = TIMED_OUT;
    const req = this._req;
    const err = new RequestTimeoutError(this._hooks.timeout ?? 0, pending, req.method, req.route);
    this._req._abortSignal(err);
    this._hooks.fail(err, this._req, this);
  }

  /**
   * The server is shutting down: a streamed response (SSE, res.stream()) would never end by
   * itself, so `req.signal` aborts (reason: 'Server shutting down') and the stream is ended
   * cleanly (the chunked body terminated: clients see a complete response and reconnect
   * elsewhere). Other responses, and streams started with `{ shutdown: 'finish' }` (finite
   * bodies: a web Response's), are left to finish within the shutdown timeout. @internal
   */
  _shutDown(): void {
    if (this._state !== STREAMING || this._finishOnShutdown) return;
    this._deadline = SHUT_DOWN;
    this._req._abortSignal(new Error('Server shutting down'));
    if (this._state === STREAMING) this._corked(OP_END_STREAM, undefined);
  }

  /** This response leads a deduplicated group under `key`. @internal */
  _leadDedup(key: string): void {
    this._dedupKey = key;
  }

  /** The body reader of this request (closes the connection after the response if unfinished). @internal */
  _attachReader(reader: BodyReader): void {
    this._reader = reader;
  }

  /** The connection was upgraded to a WebSocket: this HTTP response must never be touched again. @internal */
  _handOver(): void {
    this._state = DONE;
  }

  /** @internal */
  _remoteAddress(): string {
    if (this._remote === undefined) this._remote = this._state >= DONE ? '' : asciiText(this._uws.getRemoteAddressAsText());
    return this._remote;
  }

  /** A corked op that needs the body's total length (OP_TRY_END, OP_END_HEAD). @internal */
  _corkedWithLength(op: number, arg: Body | undefined, length: number | undefined): boolean {
    corkLength = length;
    return this._corked(op, arg);
  }
}

export function byteLength(body: Body): number {
  return typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
}
