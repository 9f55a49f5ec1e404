// The response: status and headers are buffered in JS and written in one corked burst,
// so users may set them in any order. Every method is a harmless no-op once the response
// has ended or the client has gone: the uWS object is never touched after that.
//
// The public API; the state machine and the uWS writes are in response-core.ts.
import type { ReplyDecorations } from '../decoration-types.ts';
import { cancelSource, toAsyncIterable, type StreamSource } from './stream-source.ts';
import { checkHeaderName, checkHeaderValue, listHasToken, lowerCaseKey } from './header-checks.ts';
import { PreparedHeaders } from './prepared-headers.ts';
import { EventStream } from './sse.ts';
import {
  compressAsync,
  compressChunks,
  compressSync,
  negotiateEncoding,
  streamCompressionAvailable,
  SYNC_LIMIT,
  type Compression,
  type Encoding,
} from '../compression.ts';
import { serializeCookie, signCookieValue, type CookieOptions } from './cookies.ts';
import type { SharedResponse } from '../dedup.ts';
import type { Settings } from '../../core/settings.ts';
import type { UwsResponse } from '../../uws/index.ts';
import { byteLength, ResponseCore, type ResponseHooks } from './response-core.ts';
import {
  OPEN,
  SENDING,
  STREAMING,
  DONE,
  OP_BEGIN,
  OP_END,
  OP_END_HEAD,
  OP_END_STREAM,
  OP_TRY_END,
  OP_WRITE,
  type Body,
} from './response-states.ts';

const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';
const HTML_TYPE = 'text/html; charset=utf-8';
const BINARY_TYPE = 'application/octet-stream';

export type { Body } from './response-states.ts';
/** @internal */ export type { ResponseHooks } from './response-core.ts';
/** @internal */ export type { ResponseRequest } from './response-states.ts';
export type { StreamSource };
export { PreparedHeaders, prepareHeaders, type HeaderRecord } from './prepared-headers.ts';
export { EventStream };

// Declarations merge: ResponseCore's members (its methods come through the prototype, below),
// and the fields declared with decorateReply, are typed on every Response.
export interface Response extends ResponseCore, ReplyDecorations {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the merge is how ResponseCore's members and decorations are typed (no runtime members are declared here)
export class Response {
  /** @internal */
  constructor(uws: UwsResponse, settings: Settings, hooks: ResponseHooks, head: boolean, tls: boolean) {
    this._init(uws, settings, hooks, head, tls);
  }

  /**
   * Sets a header, replacing any earlier value of the same name (case-insensitive). Arrays
   * send the header once per item. The name is checked once per distinct spelling (common
   * names are known valid), the value every time: CR, LF or NUL throw a TypeError. Numbers
   * need no check.
   */
  header(name: string, value: string | number | readonly string[]): this {
    if (this._state !== OPEN) return this._late('res.header()');
    const key = checkHeaderName(name);
    if (typeof value === 'string') this._set(key, checkHeaderValue(key, value));
    else if (typeof value === 'number')
      this._set(key, String(value)); // digits, '.', '-', 'e', 'Infinity', 'NaN': never CR/LF
    else if (Array.isArray(value)) {
      for (const v of value) checkHeaderValue(key, String(v)); // all or nothing
      this._remove(key);
      for (const v of value) this._push(key, String(v));
    } else this._set(key, checkHeaderValue(key, String(value)));
    return this;
  }

  /** Adds a header line without replacing earlier ones (e.g. several Set-Cookie). */
  appendHeader(name: string, value: string): this {
    if (this._state !== OPEN) return this._late('res.appendHeader()');
    const key = checkHeaderName(name);
    this._push(key, checkHeaderValue(key, value));
    return this;
  }

  /**
   * Sets every header of a set checked once by `prepareHeaders()`, each replacing earlier
   * lines of its name. Nothing is checked per request; on a response with no header yet the
   * set is taken in one copy.
   */
  setHeaders(headers: PreparedHeaders): this {
    if (this._state !== OPEN) return this._late('res.setHeaders()');
    if (!(headers instanceof PreparedHeaders)) throw new TypeError('res.setHeaders() takes a set made by prepareHeaders({ … })');
    const lines = headers._lines;
    const h = this._headers;
    if (h === null) {
      this._headers = lines.slice();
      this._wire = headers._wire;
      return this;
    }
    this._wire = null;
    const names = headers.names;
    for (let i = 0; i < names.length; i++) this._remove(names[i]!);
    for (let i = 0; i < lines.length; i++) h.push(lines[i]!);
    return this;
  }

  /**
   * Adds a request header name to Vary (the response depends on it: caches must key on it),
   * unless Vary already lists it (case-insensitively) or is `*`. `vary('*')` makes Vary `*`.
   */
  vary(name: string): this {
    if (this._state !== OPEN) return this._late('res.vary()');
    if (name === '*') {
      this._set('vary', '*');
      return this;
    }
    const field = checkHeaderName(name);
    const h = this._headers;
    let first = -1;
    if (h !== null) {
      for (let i = 0; i < h.length; i += 2) {
        if (h[i] !== 'vary') continue;
        if (listHasToken(h[i + 1]!, field)) return this; // listed already, or `*`
        if (first === -1) first = i;
      }
    }
    if (first === -1) this._push('vary', field);
    else {
      this._wire = null;
      h![first + 1] = h![first + 1]!.trim() === '' ? field : `${h![first + 1]}, ${field}`;
    }
    return this;
  }

  removeHeader(name: string): this {
    if (this._state !== OPEN) return this._late('res.removeHeader()');
    this._remove(lowerCaseKey(name));
    return this;
  }

  /** Sets Content-Type. */
  type(contentType: string): this {
    return this.header('content-type', contentType);
  }

  json(value: unknown): void {
    if (this._state !== OPEN) return void this._late('res.json()');
    const stringify = this._hooks.stringify;
    const text = stringify == null ? JSON.stringify(value) : stringify(value, this._status);
    if (text === undefined) throw new TypeError('Value is not JSON-serializable');
    if (this.getHeader('content-type') === undefined) this._push('content-type', JSON_TYPE);
    this.end(text);
  }

  html(markup: string): void {
    if (this._state !== OPEN) return void this._late('res.html()');
    this.header('content-type', HTML_TYPE).end(markup);
  }

  /** Strings as text/plain, bytes as application/octet-stream, anything else as JSON. */
  send(body?: unknown): void {
    if (this._state !== OPEN) return void this._late('res.send()');
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
    if (this._state !== OPEN) return void this._late('res.end()');
    // The route's onSend hooks see (and may replace) the payload first, once; they call _finishEnd.
    const onSend = this._hooks.onSend;
    if (onSend != null && !this._inSend) {
      this._inSend = true;
      return onSend(this._req, this, body);
    }
    this._finishEnd(body);
  }

  /** Writes the final body: shared with a dedup group, compressed when it pays. @internal */
  _finishEnd(body: Body | undefined): void {
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
    this._beginSending();
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
    if (
      type === undefined ||
      !c.filter(type) ||
      this.getHeader('content-encoding') !== undefined ||
      this.getHeader('content-range') !== undefined
    )
      return null;
    this.vary('accept-encoding');
    const req = this._req;
    if (c.skipCredentialed && (req.header('cookie') !== undefined || req.header('authorization') !== undefined)) return null;
    return negotiateEncoding(req.header('accept-encoding'), c.encodings);
  }

  /** A follower of a deduplicated group answers with the leader's response. @internal */
  _replay(shared: SharedResponse): void {
    if (this._state !== OPEN) return;
    this._adoptHeaders(shared.status, shared.headers);
    this.end(shared.body);
  }

  redirect(location: string, status = 302): void {
    if (this._state !== OPEN) return void this._late('res.redirect()');
    this.status(status).header('location', location).end();
  }

  cookie(name: string, value: string, options: CookieOptions = {}): this {
    if (this._state !== OPEN) return this._late('res.cookie()');
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
   * `shutdown`: what a graceful shutdown does to the stream — `'end'` (default: end it
   * cleanly and abort `req.signal`, for endless streams) or `'finish'` (a finite body, such
   * as a streamed page: let it finish within the shutdown timeout). A stream with a `length`
   * always finishes: its Content-Length is out, so ending it early could only cut it (a
   * static file streamed from disk was cut mid-download by a graceful shutdown).
   */
  async stream(source: StreamSource, options: { length?: number; shutdown?: 'end' | 'finish' } = {}): Promise<void> {
    if (this._state !== OPEN) {
      cancelSource(source);
      this._late('res.stream()');
      return;
    }
    const length = options.length;
    if (length !== undefined && !(Number.isSafeInteger(length) && length >= 0))
      throw new TypeError('stream length must be a non-negative integer');
    const shutdown = options.shutdown;
    if (shutdown !== undefined && shutdown !== 'end' && shutdown !== 'finish')
      throw new TypeError(`stream shutdown must be 'end' or 'finish', got ${String(shutdown)}`);
    this._finishOnShutdown = shutdown === 'finish' || length !== undefined;
    const c = this._hooks.compression;
    let encoding = c !== null ? this._negotiate(c, undefined) : null;
    if (encoding !== null && !streamCompressionAvailable(c!)) encoding = null; // over maxStreams: identity
    if (encoding !== null) this._push('content-encoding', encoding);
    const known = encoding === null ? length : undefined; // compression changes the length
    if (this._head) {
      cancelSource(source);
      this._releaseDedup();
      this._corkedWithLength(OP_END_HEAD, undefined, known);
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
      this._settings.logger.error(
        { err, method: this._req.method, route: this._req.route },
        'response stream failed; closing the connection',
      );
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
      this._corkedWithLength(OP_TRY_END, new Uint8Array(0), 0);
      return;
    }
    for await (const item of iterable) {
      if (this._state !== STREAMING) return;
      let chunk = typeof item === 'string' ? Buffer.from(item) : item;
      if (sent + chunk.byteLength > total) throw new Error(`stream produced more than the declared ${total} bytes`);
      sent += chunk.byteLength;
      for (;;) {
        const before = this._uws.getWriteOffset();
        const ok = this._corkedWithLength(OP_TRY_END, chunk, total);
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
    if (this._state !== OPEN) this._late('res.sse()');
    else {
      this.header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache, no-transform')
        .header('x-accel-buffering', 'no');
      this.writeHead();
      if (options.retry !== undefined) this.write(`retry: ${Math.floor(options.retry)}\n\n`);
    }
    return new EventStream(this);
  }
}

// ResponseCore's methods, through the prototype chain as `extends` would set it up, while
// Response stays a base class that V8 constructs inline (see ResponseCore).
Object.setPrototypeOf(Response.prototype, ResponseCore.prototype);
