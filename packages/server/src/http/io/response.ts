// The response: status and headers are buffered in JS and written in one corked burst,
// so users may set them in any order. Every method is a harmless no-op once the response
// has ended or the client has gone: the uWS object is never touched after that.
import { Readable } from 'node:stream';
import type { BodyReader } from './body.ts';
import { compressAsync, compressChunks, compressSync, negotiateEncoding, streamCompressionAvailable, SYNC_LIMIT, type Compression, type Encoding } from '../../serving/compression.ts';
import { serializeCookie, signCookieValue, type CookieOptions } from './cookies.ts';
import { MAX_SHARED_BODY, shareable, type DedupTable, type SharedResponse } from '../../serving/dedup.ts';
import type { Request } from './request.ts';
import type { Settings } from '../../app/settings.ts';
import { statusLine } from '../status.ts';
import { asciiText, type UwsResponse } from '../../uws/index.ts';

// Typed `number` so that TypeScript does not narrow `_state` across awaits.
const OPEN: number = 0;
const SENDING: number = 1; // the body is being compressed off-thread: no more writes, still abortable
const STREAMING: number = 2;
const DONE: number = 3;
const ABORTED: number = 4;

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_HEADER_VALUE = /[\r\n\0]/;
const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';
const HTML_TYPE = 'text/html; charset=utf-8';
const BINARY_TYPE = 'application/octet-stream';

export type Body = string | Uint8Array | ArrayBuffer;
export type StreamSource = ReadableStream<Uint8Array | string> | AsyncIterable<Uint8Array | string> | Readable;

/** Hooks the dispatcher gives each response: bookkeeping and the route's error path. @internal */
export interface ResponseHooks {
  settled(res: Response): void;
  fail(err: unknown, req: Request<any>, res: Response): void;
  readonly compression: Compression | null;
  readonly dedup: DedupTable | null;
}

// cork() runs its callback synchronously, so one static thunk and these slots replace a
// closure per corked write.
let corkRes: Response | null = null;
let corkOp = 0;
let corkArg: Body | undefined;
let corkResult = false;
let corkLength: number | undefined;
function corkThunk(): void {
  corkResult = corkRes!._op(corkOp, corkArg);
}
const OP_END = 0;
const OP_BEGIN = 1;
const OP_WRITE = 2;
const OP_END_STREAM = 3;
const OP_TRY_END = 4; // a chunk of a body whose total length (corkLength) is known
const OP_END_HEAD = 5; // HEAD answer for a streamed body: headers, length if known (corkLength)

export class Response {
  /** @internal */ _uws: UwsResponse;
  /** @internal */ _req!: Request<any>;
  /** @internal */ _settings: Settings;
  /** @internal */ _hooks: ResponseHooks;
  /** @internal */ _status = 200;
  /** @internal */ _headers: string[] | null = null;
  /** @internal */ _state: number = OPEN;
  /** @internal */ _sync = true;
  /** @internal */ _head: boolean;
  /** @internal */ _tls: boolean;
  /** @internal */ _reader: BodyReader | null = null;
  /** @internal */ _deadline = 0;
  /** @internal */ _drain: (() => void) | null = null;
  /** @internal */ _remote: string | undefined = undefined;
  /** Set while this response leads a deduplicated group. @internal */ _dedupKey: string | null = null;

  /** @internal */
  constructor(uws: UwsResponse, settings: Settings, hooks: ResponseHooks, head: boolean, tls: boolean) {
    this._uws = uws;
    this._settings = settings;
    this._hooks = hooks;
    this._head = head;
    this._tls = tls;
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
    if (this._state === OPEN) {
      statusLine(code); // validates the code now rather than at write time
      this._status = code;
    }
    return this;
  }

  /** Sets a header, replacing any earlier value of the same name. Arrays send the header once per item. */
  header(name: string, value: string | number | readonly string[]): this {
    if (this._state !== OPEN) return this;
    const key = checkHeaderName(name);
    this.removeHeader(key);
    if (Array.isArray(value)) for (const v of value) this._push(key, checkHeaderValue(key, v));
    else this._push(key, checkHeaderValue(key, String(value)));
    return this;
  }

  /** Adds a header line without replacing earlier ones (e.g. several Set-Cookie). */
  appendHeader(name: string, value: string): this {
    if (this._state !== OPEN) return this;
    const key = checkHeaderName(name);
    this._push(key, checkHeaderValue(key, value));
    return this;
  }

  getHeader(name: string): string | undefined {
    const h = this._headers;
    if (h === null) return undefined;
    const key = name.toLowerCase();
    for (let i = 0; i < h.length; i += 2) if (h[i] === key) return h[i + 1];
    return undefined;
  }

  removeHeader(name: string): this {
    const h = this._headers;
    if (h === null || this._state !== OPEN) return this;
    const key = name.toLowerCase();
    for (let i = h.length - 2; i >= 0; i -= 2) if (h[i] === key) h.splice(i, 2);
    return this;
  }

  /** Sets Content-Type. */
  type(contentType: string): this {
    return this.header('content-type', contentType);
  }

  /** @internal */
  _push(key: string, value: string): void {
    // uWS computes framing itself; a second Content-Length would corrupt the response.
    if (key === 'content-length' || key === 'transfer-encoding') return;
    (this._headers ??= []).push(key, value);
  }

  json(value: unknown): void {
    if (this._state !== OPEN) return;
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError('Value is not JSON-serializable');
    if (this.getHeader('content-type') === undefined) this._push('content-type', JSON_TYPE);
    this.end(text);
  }

  html(markup: string): void {
    if (this._state !== OPEN) return;
    this.header('content-type', HTML_TYPE).end(markup);
  }

  /** Strings as text/plain, bytes as application/octet-stream, anything else as JSON. */
  send(body?: unknown): void {
    if (this._state !== OPEN) return;
    if (body === undefined || body === null) return this.end();
    if (typeof body === 'string') {
      if (this.getHeader('content-type') === undefined) this._push('content-type', TEXT_TYPE);
      return this.end(body);
    }
    if (body instanceof Uint8Array || body instanceof ArrayBuffer) {
      if (this.getHeader('content-type') === undefined) this._push('content-type', BINARY_TYPE);
      return this.end(body);
    }
    this.json(body);
  }

  /** Ends the response, with an optional body. */
  end(body?: Body): void {
    if (this._state !== OPEN) return;
    if (this._dedupKey !== null) this._share(body);
    const c = this._hooks.compression;
    if (c !== null && body !== undefined && this._compressAndEnd(body, c)) return;
    this._corked(OP_END, body);
  }

  /** Compresses and sends the body if the route, the content and the client allow it. */
  private _compressAndEnd(body: Body, c: Compression): boolean {
    const encoding = this._negotiate(c, byteLength(body));
    if (encoding === null) return false;
    const bytes = typeof body === 'string' ? Buffer.from(body) : body instanceof ArrayBuffer ? new Uint8Array(body) : body;
    if (bytes.byteLength <= SYNC_LIMIT) {
      this._push('content-encoding', encoding);
      this._corked(OP_END, compressSync(bytes, encoding, c));
      return true;
    }
    this._state = SENDING;
    compressAsync(bytes, encoding, c).then(
      (out) => {
        if (this._state !== SENDING) return; // the client left meanwhile
        this._push('content-encoding', encoding);
        this._corked(OP_END, out);
      },
      (err) => {
        this._settings.logger.error({ err }, 'compression failed; sending identity');
        if (this._state === SENDING) this._corked(OP_END, bytes);
      },
    );
    return true;
  }

  /** Which encoding to use for a body of `size` bytes (null: identity). Adds Vary when it matters. */
  private _negotiate(c: Compression, size: number | undefined): Encoding | null {
    const status = this._status;
    // 206 bodies are byte ranges of the identity representation: never re-encode them.
    if ((size !== undefined && size < c.threshold) || status === 204 || status === 206 || status === 304 || status < 200) return null;
    const type = this.getHeader('content-type');
    if (type === undefined || !c.filter(type) || this.getHeader('content-encoding') !== undefined || this.getHeader('content-range') !== undefined) return null;
    this._addVary('accept-encoding');
    const req = this._req;
    if (c.skipCredentialed && (req._header('cookie') !== undefined || req._header('authorization') !== undefined)) return null;
    return negotiateEncoding(req._header('accept-encoding'), c.encodings);
  }

  /** @internal */
  _addVary(field: string): void {
    const current = this.getHeader('vary');
    if (current === undefined) this._push('vary', field);
    else if (!current.toLowerCase().split(',').some((v) => v.trim() === field || v.trim() === '*')) this.header('vary', `${current}, ${field}`);
  }

  /** The leader of a deduplicated group finished: share its response (captured before compression). @internal */
  _share(body: Body | undefined): void {
    const key = this._dedupKey!;
    this._dedupKey = null;
    const length = body === undefined ? 0 : byteLength(body);
    const shared = shareable(this._headers, length) ? { status: this._status, headers: this._headers ? this._headers.slice() : [], body } : null;
    this._hooks.dedup!.settle(key, shared);
  }

  /** A follower of a deduplicated group answers with the leader's response. @internal */
  _replay(shared: SharedResponse): void {
    if (this._state !== OPEN) return;
    this._status = shared.status;
    this._headers = shared.headers.slice();
    this.end(shared.body);
  }

  /** The leader will not produce a shareable response: waiting requests run the handler themselves. */
  private _releaseDedup(): void {
    const key = this._dedupKey;
    if (key === null) return;
    this._dedupKey = null;
    this._hooks.dedup!.settle(key, null);
  }

  redirect(location: string, status = 302): void {
    if (this._state !== OPEN) return;
    this.status(status).header('location', location).end();
  }

  cookie(name: string, value: string, options: CookieOptions = {}): this {
    if (this._state !== OPEN) return this;
    let v = value;
    if (options.signed) {
      const secret = this._settings.cookieSecrets[0];
      if (secret === undefined) throw new Error('Signed cookies need the App option cookieSecret');
      v = signCookieValue(value, secret);
    }
    return this.appendHeader('set-cookie', serializeCookie(name, v, { path: '/', ...options }));
  }

  clearCookie(name: string, options: Omit<CookieOptions, 'maxAge' | 'expires' | 'signed'> = {}): this {
    return this.appendHeader('set-cookie', serializeCookie(name, '', { path: '/', ...options, expires: new Date(0), maxAge: 0 }));
  }

  // ----- streaming ---------------------------------------------------------------

  /**
   * Streams a web ReadableStream, an async iterable or a Node Readable with backpressure:
   * when uWS reports a full socket buffer we wait for onWritable before reading more.
   * With `length` (the exact byte count) the body goes out with Content-Length through
   * uWS tryEnd instead of chunked encoding, and HEAD answers report it.
   */
  async stream(source: StreamSource, options: { length?: number } = {}): Promise<void> {
    if (this._state !== OPEN) {
      cancelSource(source);
      return;
    }
    const length = options.length;
    if (length !== undefined && !(Number.isSafeInteger(length) && length >= 0)) throw new TypeError('stream length must be a non-negative integer');
    const c = this._hooks.compression;
    let encoding = c !== null ? this._negotiate(c, undefined) : null;
    if (encoding !== null && !streamCompressionAvailable(c!)) encoding = null; // over maxStreams: identity
    if (encoding !== null) this._push('content-encoding', encoding);
    const known = encoding === null ? length : undefined; // compression changes the length
    if (this._head) {
      cancelSource(source);
      this._releaseDedup();
      corkLength = known;
      this._corked(OP_END_HEAD, undefined);
      return;
    }
    if (!this.writeHead()) {
      cancelSource(source);
      return;
    }
    const iterable = encoding === null ? toAsyncIterable(source) : compressChunks(toAsyncIterable(source), encoding, c!, this._req.signal);
    try {
      if (known !== undefined) await this._streamKnownLength(iterable, known);
      else
        for await (const chunk of iterable) {
          if (this._state !== STREAMING) break;
          if (!this.write(chunk)) await this.drained();
        }
    } catch (err) {
      this._settings.logger.error({ err }, 'response stream failed; closing the connection');
      this.destroy();
      return;
    } finally {
      if (this._state !== STREAMING) cancelSource(source);
    }
    this.endStream();
  }

  /** tryEnd with the total size: uWS writes Content-Length and may take only part of a chunk. */
  private async _streamKnownLength(iterable: AsyncIterable<Uint8Array | string>, total: number): Promise<void> {
    let sent = 0;
    if (total === 0) {
      corkLength = 0;
      this._corked(OP_TRY_END, new Uint8Array(0));
      return;
    }
    for await (const item of iterable) {
      if (this._state !== STREAMING) return;
      let chunk = typeof item === 'string' ? Buffer.from(item) : item;
      if (sent + chunk.byteLength > total) throw new Error(`stream produced more than the declared ${total} bytes`);
      sent += chunk.byteLength;
      for (;;) {
        const before = this._uws.getWriteOffset();
        corkLength = total;
        const ok = this._corked(OP_TRY_END, chunk);
        if (ok || this._state !== STREAMING) break;
        await this.drained();
        if (this._state !== STREAMING) return;
        chunk = chunk.subarray(this._uws.getWriteOffset() - before);
        if (chunk.byteLength === 0) break;
      }
    }
    if (this._state === STREAMING) throw new Error(`stream ended after ${sent} of the declared ${total} bytes`);
  }

  /** Sends status and headers now; later chunks go through write(). Returns false if finished. */
  writeHead(): boolean {
    if (this._state !== OPEN) return this._state === STREAMING;
    this._releaseDedup();
    this._corked(OP_BEGIN, undefined);
    return true;
  }

  /** Writes a chunk. Returns false under backpressure (the chunk is still queued): await drained(). */
  write(chunk: string | Uint8Array): boolean {
    if (this._state === OPEN) this.writeHead();
    if (this._state !== STREAMING) return false;
    if (this._head) return true;
    return this._corked(OP_WRITE, chunk);
  }

  /** Resolves when the socket can take more, or the response is finished. */
  drained(): Promise<void> {
    if (this._state !== STREAMING) return Promise.resolve();
    return new Promise((resolve) => {
      const prev = this._drain;
      this._drain = prev ? () => (prev(), resolve()) : resolve;
    });
  }

  /** Finishes a streamed response. */
  endStream(): void {
    if (this._state === OPEN) this.writeHead();
    if (this._state !== STREAMING) return;
    this._corked(OP_END_STREAM, undefined);
  }

  /** Drops the connection (for failures after headers were sent). */
  destroy(): void {
    if (this._state >= DONE) return;
    this._uws.close();
    this._abort();
  }

  /** Server-sent events on this response. */
  sse(options: { retry?: number } = {}): EventStream {
    if (this._state === OPEN) {
      this.header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache, no-transform')
        .header('x-accel-buffering', 'no');
      this.writeHead();
      if (options.retry !== undefined) this.write(`retry: ${Math.floor(options.retry)}\n\n`);
    }
    return new EventStream(this);
  }

  // ----- internals -----------------------------------------------------------------

  /** @internal */
  _corked(op: number, arg: Body | undefined): boolean {
    if (this._sync) return this._op(op, arg);
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
    const u = this._uws;
    if (op === OP_WRITE) return u.write(arg!);
    if (op === OP_TRY_END) {
      const [ok, done] = u.tryEnd(arg!, corkLength!);
      if (done) this._settle(DONE);
      return ok;
    }
    if (op === OP_END_STREAM) {
      if (this._head) this._endWithoutBody(undefined);
      else u.end(undefined, this._closeAfter());
      this._settle(DONE);
      return true;
    }
    if (this._status !== 200) u.writeStatus(statusLine(this._status));
    const h = this._headers;
    if (h !== null) for (let i = 0; i < h.length; i += 2) u.writeHeader(h[i]!, h[i + 1]!);
    if (op === OP_BEGIN) {
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
    const status = this._status;
    if (op === OP_END_HEAD) this._endWithoutBody(status === 204 || status === 304 || status < 200 ? undefined : corkLength);
    else if (status === 204 || status === 304 || status < 200) this._endWithoutBody(undefined);
    else if (this._head) this._endWithoutBody(arg === undefined ? 0 : byteLength(arg));
    else u.end(arg, this._closeAfter());
    this._settle(DONE);
    return true;
  }

  /**
   * Ends without a body. uWS writes `Content-Length: 2^63` when given `undefined` as the
   * length, so an unknown length must mean calling it with no argument at all.
   */
  private _endWithoutBody(length: number | undefined): void {
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
   */
  private _closeAfter(): boolean {
    return this._settings.draining || (this._reader !== null && !this._reader.ended);
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
    const ctrl = this._req._abort;
    if (ctrl && !ctrl.signal.aborted) ctrl.abort(new Error('Client closed the connection'));
  }

  /** @internal */
  _remoteAddress(): string {
    if (this._remote === undefined) this._remote = this._state >= DONE ? '' : asciiText(this._uws.getRemoteAddressAsText());
    return this._remote;
  }
}

/** A server-sent events channel created by `res.sse()`. */
export class EventStream {
  private readonly res: Response;
  constructor(res: Response) {
    this.res = res;
  }
  /** False once the client has gone or close() was called. */
  get open(): boolean {
    return this.res.headersSent && !this.res.finished;
  }
  /** Sends one event; objects are JSON-encoded. Returns false under backpressure (await drained()). */
  send(data: unknown, options: { event?: string; id?: string } = {}): boolean {
    let out = '';
    if (options.event !== undefined) out += `event: ${singleLine('event', options.event)}\n`;
    if (options.id !== undefined) out += `id: ${singleLine('id', options.id)}\n`;
    const text = typeof data === 'string' ? data : JSON.stringify(data);
    for (const line of text.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
    return this.res.write(out + '\n');
  }
  /** A comment line: keeps proxies from timing the stream out. */
  comment(text = ''): boolean {
    return this.res.write(`: ${text.replace(/[\r\n]/g, ' ')}\n\n`);
  }
  drained(): Promise<void> {
    return this.res.drained();
  }
  close(): void {
    this.res.endStream();
  }
}

function singleLine(field: string, value: string): string {
  if (/[\r\n]/.test(value)) throw new TypeError(`SSE ${field} must not contain newlines`);
  return value;
}

// Apps use a handful of header names: validate and lower-case each once.
const checkedNames = new Map<string, string>();

function checkHeaderName(name: string): string {
  let key = checkedNames.get(name);
  if (key !== undefined) return key;
  if (!HEADER_NAME.test(name)) throw new TypeError(`Invalid header name: ${JSON.stringify(name)}`);
  key = name.toLowerCase();
  if (checkedNames.size < 1024) checkedNames.set(name, key);
  return key;
}

function checkHeaderValue(name: string, value: string): string {
  if (BAD_HEADER_VALUE.test(value)) throw new TypeError(`Header ${name} contains CR, LF or NUL: refused (response splitting)`);
  return value;
}

function byteLength(body: Body): number {
  return typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
}

function toAsyncIterable(source: StreamSource): AsyncIterable<Uint8Array | string> {
  if (Symbol.asyncIterator in source) return source as AsyncIterable<Uint8Array | string>;
  // Older ReadableStream implementations without async iteration.
  const reader = (source as ReadableStream<Uint8Array | string>).getReader();
  return {
    async *[Symbol.asyncIterator]() {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          yield value;
        }
      } finally {
        reader.releaseLock();
      }
    },
  };
}

function cancelSource(source: StreamSource): void {
  try {
    if (source instanceof Readable) source.destroy();
    else if (typeof (source as ReadableStream).cancel === 'function' && !(source as ReadableStream).locked) void (source as ReadableStream).cancel().catch(() => {});
  } catch {
    // already closed
  }
}
