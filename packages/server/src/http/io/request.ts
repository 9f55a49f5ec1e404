// The request as handlers see it. While the uWS callback runs, reads go straight to the
// uWS request (nothing is copied that nobody reads); when the handler goes async, the
// dispatcher calls `_snapshot()` so every getter keeps working after the uWS object dies.
import type { RequestDecorations } from '../decoration-types.ts';
import { BodyReader, bodyKind, parseJson } from './body.ts';
import { parseCookies, unsignCookieValue } from './cookies.ts';
import { HttpError } from '../errors.ts';
import { dict } from '../../core/dict.ts';
import { hasCloseDelimiter, multipartBoundary, parseMultipart, type MultipartLimits, type MultipartPart } from './multipart.ts';
import { parseQuery, type QueryRecord } from './query.ts';
import { collectHeaderList, collectHeaders, headerIn, headerRecord } from './request-headers.ts';
import { lowerCaseKey } from './header-checks.ts';
import type { Response } from './response.ts';
import type { AppView, Settings } from '../../core/settings.ts';
import type { Get, RouteTypes } from '../route-types.ts';
import { loadUws, type UwsRequest } from '../../uws/index.ts';
import { childLogger, type Logger } from '../../core/logger.ts';
import { generateRequestId, isWellFormedRequestId } from '../observe/request-id.ts';

/** Data middleware passes to later handlers. Augment it: `declare module '@tachyon/server' { interface Locals { user: User } }`. */
export interface Locals {
  [key: string]: unknown;
}

// Declarations merge: fields declared with decorateRequest are typed on every Request.
// biome-ignore lint/correctness/noUnusedVariables: a merged declaration repeats the class's type parameters
export interface Request<T extends RouteTypes = {}> extends RequestDecorations {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the merge is how decorations are typed (no runtime members are declared here)
export class Request<T extends RouteTypes = {}> {
  /** Upper-case method as sent, e.g. `GET`. */
  readonly method: string;
  /**
   * The pattern of the route that matched, e.g. `/users/:id` (`/*` when no route matched):
   * a low-cardinality label for metrics and logs, unlike the path.
   */
  readonly route: string;
  params: Get<T, 'params', Record<string, string>>;
  /** The validated body when the route declares a `body` schema; otherwise undefined (use json()/text()/…). */
  body: Get<T, 'body', undefined>;

  /** @internal */ _uws: UwsRequest | null;
  /** @internal */ _res: Response;
  /** @internal */ _settings: Settings;
  /** @internal */ _path: string | undefined = undefined;
  /** @internal */ _rawQuery: string | undefined = undefined;
  /** All headers as [name, value, …], once copied (at once for requests with a body: see framing.ts). @internal */ _headerList:
    | string[]
    | undefined;
  /** All headers as a record, built when `headers` is read. @internal */ _headers: Record<string, string> | undefined = undefined;
  /** @internal */ _query: unknown = undefined;
  /** @internal */ _cookies: unknown = undefined;
  /** @internal */ _signedCookies: Record<string, string> | undefined = undefined;
  /** @internal */ _validatedHeaders: unknown = undefined;
  /** @internal */ _ip: string | undefined = undefined;
  /** @internal */ _remote: string | undefined = undefined;
  /** @internal */ _abort: AbortController | undefined = undefined;
  /** @internal */ _reader: BodyReader | null | undefined = undefined;
  /** @internal */ _bodyLimit: number;
  /** @internal */ _locals: Locals | undefined = undefined;
  /** @internal */ _id: string | undefined = undefined;
  /** @internal */ _logger: Logger | undefined = undefined;

  /** @internal */
  constructor(uws: UwsRequest, res: Response, method: string, settings: Settings, bodyLimit: number, route = '', headerList?: string[]) {
    this._uws = uws;
    this._headerList = headerList;
    this._res = res;
    this.method = method;
    this.route = route;
    this._settings = settings;
    this._bodyLimit = bodyLimit;
    this.params = undefined as never;
    this.body = undefined as never;
  }

  /** Copies what is still needed from the uWS request before it dies. @internal */
  _snapshot(): void {
    const uws = this._uws;
    if (uws === null) return;
    this._path ??= uws.getUrl();
    this._rawQuery ??= uws.getQuery() ?? '';
    if (this._headers === undefined) this._headerList ??= collectHeaderList(uws);
    if (this._reader === undefined) this._reader = this.hasBody ? this._attachReader() : null;
    this._uws = null;
  }

  /** Path without the query string, as sent (not decoded). */
  get path(): string {
    return (this._path ??= this._uws ? this._uws.getUrl() : '/');
  }

  /** Path and query string. */
  get url(): string {
    const q = this.rawQuery;
    return q === '' ? this.path : `${this.path}?${q}`;
  }

  /** The query string without `?`. */
  get rawQuery(): string {
    return (this._rawQuery ??= this._uws ? (this._uws.getQuery() ?? '') : '');
  }

  /** Parsed (and, with a `query` schema, validated) query. Prototype-free. */
  get query(): Get<T, 'query', QueryRecord> {
    return (this._query ??= parseQuery(this.rawQuery)) as Get<T, 'query', QueryRecord>;
  }

  /** All headers, lower-case names; repeated headers joined with ", " (cookies with "; "). */
  get headers(): Get<T, 'headers', Record<string, string>> {
    if (this._validatedHeaders !== undefined) return this._validatedHeaders as Get<T, 'headers', Record<string, string>>;
    if (this._headers === undefined) {
      const list = this._headerList;
      this._headers = list !== undefined ? headerRecord(list) : this._uws !== null ? collectHeaders(this._uws) : dict<string>();
    }
    return this._headers as Get<T, 'headers', Record<string, string>>;
  }

  /**
   * One header by name (case-insensitive), or undefined. Reads straight from the uWS request
   * while the handler runs synchronously, and a name written in lower case
   * (`req.header('origin')`) costs no conversion: no allocation either way.
   */
  header(name: string): string | undefined {
    const key = lowerCaseKey(name);
    if (this._headers !== undefined) return this._headers[key];
    if (this._headerList !== undefined) return headerIn(this._headerList, key);
    if (this._uws === null) return undefined;
    const value = this._uws.getHeader(key);
    return value === '' ? undefined : value;
  }

  get cookies(): Get<T, 'cookies', Record<string, string>> {
    return (this._cookies ??= parseCookies(this.header('cookie'))) as Get<T, 'cookies', Record<string, string>>;
  }

  /** Cookies whose signature verifies against any of the app's secrets. Tampered ones are absent. */
  get signedCookies(): Record<string, string> {
    if (this._signedCookies) return this._signedCookies;
    const out: Record<string, string> = dict();
    const secrets = this._settings.cookieSecrets;
    if (secrets.length > 0) {
      const all = parseCookies(this.header('cookie'));
      for (const name in all) {
        const value = unsignCookieValue(all[name]!, secrets);
        if (value !== undefined) out[name] = value;
      }
    }
    return (this._signedCookies = out);
  }

  /** The socket's peer address (IPv4 or IPv6 text). */
  get remoteAddress(): string {
    if (this._remote === undefined) this._remote = this._res._remoteAddress();
    return this._remote;
  }

  /** The client address, honouring the app's trustProxy setting. */
  get ip(): string {
    return (this._ip ??= resolveClientIp(this.remoteAddress, this.header('x-forwarded-for'), this._settings.trustProxy));
  }

  /** `http` or `https`, honouring X-Forwarded-Proto behind a trusted proxy. */
  get protocol(): string {
    const forwarded = this._settings.trustProxy !== false ? this.header('x-forwarded-proto') : undefined;
    return forwarded ? forwarded.split(',')[0]!.trim() : this._res._tls ? 'https' : 'http';
  }

  /** @internal */
  _abortSignal(reason: Error): void {
    const ctrl = this._abort;
    if (ctrl !== undefined && !ctrl.signal.aborted) ctrl.abort(reason);
  }

  /** Stores a validated value (validation runs in the route's lifecycle). @internal */
  _setValidated(target: 'params' | 'query' | 'headers' | 'cookies' | 'body', value: unknown): void {
    if (target === 'params') this.params = value as never;
    else if (target === 'query') this._query = value;
    else if (target === 'headers') this._validatedHeaders = value;
    else if (target === 'cookies') this._cookies = value;
    else this.body = value as never;
  }

  /** Aborts when the client goes away before the response is complete. */
  get signal(): AbortSignal {
    if (this._abort === undefined) {
      this._abort = new AbortController();
      if (this._res.aborted) this._abort.abort(new HttpError(499, 'Client closed request'));
    }
    return this._abort.signal;
  }

  /** The app serving this request, read-only: draining, connections, inflight, logger. */
  get app(): AppView {
    return this._settings.state.app;
  }

  /**
   * This request's id: from the incoming `X-Request-Id` when trusted (the app's `requestId`
   * option, else trustProxy) and well-formed, otherwise generated. With `requestId` on it is
   * also in the response header; off, it is made only when read (docs/logging.md).
   */
  get id(): string {
    return (this._id ??= this._makeId());
  }

  /** @internal */
  _makeId(): string {
    const config = this._settings.requestId;
    const trusted = config?.trustHeader ?? this._settings.trustProxy !== false;
    if (trusted) {
      const incoming = this.header(config?.header ?? 'x-request-id');
      if (isWellFormedRequestId(incoming)) return incoming;
    }
    if (config === null || config.generate === generateRequestId) return generateRequestId();
    // A custom generator that fails or returns a bad id fails this request (500, logged);
    // the request keeps a generated id so its error path can still log with one.
    this._id = generateRequestId();
    const id: unknown = config.generate();
    if (typeof id !== 'string' || !isWellFormedRequestId(id))
      throw new TypeError(`requestId.generate() must return 1-200 printable ASCII characters without spaces, got ${JSON.stringify(id)}`);
    return id;
  }

  /** The app's logger bound to this request: every line carries `reqId` (pino's child logger). Made on first use. */
  get log(): Logger {
    return (this._logger ??= childLogger(this._settings.logger, { reqId: this.id }));
  }

  /** Where the framework logs about this request: `req.log` with request ids on, the app's logger otherwise. @internal */
  _log(): Logger {
    return this._settings.requestId !== null ? this.log : this._settings.logger;
  }

  /** Per-request data for middleware to hand to later handlers. */
  get locals(): Locals {
    return (this._locals ??= {});
  }

  // ----- bodies ------------------------------------------------------------------

  /** True when the request declares a body: a Content-Length other than 0, or Transfer-Encoding. */
  get hasBody(): boolean {
    const cl = this.header('content-length');
    if (cl !== undefined) return cl !== '0';
    return this.header('transfer-encoding') !== undefined;
  }

  /** @internal */
  _attachReader(): BodyReader {
    const declared = Number(this.header('content-length') ?? 0);
    const reader = new BodyReader(this._res._uws, this._bodyLimit, Number.isFinite(declared) ? declared : 0);
    this._res._attachReader(reader);
    return reader;
  }

  /** @internal */
  _bodyReader(): BodyReader | null {
    if (this._reader === undefined) {
      // Still inside the uWS callback: attach now, or the bytes would be lost.
      this._reader = this._uws !== null && !this._res.finished && this.hasBody ? this._attachReader() : null;
    }
    return this._reader;
  }

  /**
   * Why reading the body stopped, or null: an HttpError 413 once it grew past the body limit,
   * a ClientAbortError when the client went away. Lets a handler that gave the body to other
   * code (a web Request for a mounted framework) answer what really happened.
   */
  get bodyError(): Error | null {
    return this._reader?.error ?? null;
  }

  /** The raw body bytes (up to the body limit: 413 past it). */
  async bytes(): Promise<Uint8Array> {
    const reader = this._bodyReader();
    return reader ? reader.collect() : Buffer.alloc(0);
  }

  async text(): Promise<string> {
    return Buffer.from(await this.bytes()).toString('utf8');
  }

  /** Parses the body as JSON whatever its content type; 400 when malformed. */
  async json<J = unknown>(): Promise<J> {
    const reader = this._bodyReader();
    return parseJson(reader ? await reader.collect() : Buffer.alloc(0)) as J;
  }

  /** urlencoded or multipart bodies as a web FormData (multipart is buffered: see `multipart()` for streaming). */
  async formData(): Promise<FormData> {
    const type = this.header('content-type') ?? '';
    const kind = bodyKind(type);
    const form = new FormData();
    if (kind === 'urlencoded') {
      const fields = parseQuery(await this.text());
      for (const key in fields) {
        const v = fields[key]!;
        if (typeof v === 'string') form.append(key, v);
        else for (const item of v) form.append(key, item);
      }
      return form;
    }
    if (kind !== 'multipart') throw new HttpError(415, 'Expected a multipart/form-data or urlencoded body');
    const boundary = multipartBoundary(type);
    if (boundary === undefined) throw new HttpError(400, 'Malformed multipart Content-Type: no boundary');
    const bytes = await this.bytes();
    const parts = loadUws().getParts(bytes, type);
    if (!parts || !hasCloseDelimiter(bytes, boundary)) throw new HttpError(400, 'Malformed or truncated multipart body');
    for (const part of parts) {
      const data = Buffer.copyBytesFrom(new Uint8Array(part.data));
      if (part.filename !== undefined)
        form.append(part.name, new File([data], part.filename, { type: part.type ?? 'application/octet-stream' }));
      else form.append(part.name, data.toString('utf8'));
    }
    return form;
  }

  /**
   * Streams a multipart/form-data body part by part (busboy): fields as strings, files as
   * Readables. For uploads too large for formData(). Limits past which it throws 413:
   * fileSize (default: the body limit), files (10), fields (100), fieldSize (64 KiB).
   */
  multipart(limits: MultipartLimits = {}): AsyncGenerator<MultipartPart> {
    const type = this.header('content-type') ?? '';
    if (bodyKind(type) !== 'multipart') throw new HttpError(415, 'Expected a multipart/form-data body');
    return parseMultipart(type, this, limits, this._bodyLimit);
  }

  /** Iterates the body chunk by chunk with backpressure: the socket pauses while you work. */
  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array, void, undefined> {
    const reader = this._bodyReader();
    if (reader) yield* reader.chunksAsTheyArrive();
  }
}

/** Picks the client address out of X-Forwarded-For according to the trust setting. */
export function resolveClientIp(remote: string, forwardedFor: string | undefined, trust: Settings['trustProxy']): string {
  if (trust === false || !forwardedFor) return remote;
  const chain = forwardedFor
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  chain.push(remote);
  if (trust === true) return chain[0]!;
  if (typeof trust === 'number') return chain[Math.max(0, chain.length - 1 - trust)]!;
  let i = chain.length - 1;
  while (i > 0 && trust(chain[i]!, chain.length - 1 - i)) i--;
  return chain[i]!;
}
