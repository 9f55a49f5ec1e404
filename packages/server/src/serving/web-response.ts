// The light web Response: what `new Response(body, init)` makes, once lightResponses() has
// replaced the global `Response`, for the answers fetch handlers return most (a string or
// bytes, a status, headers: SvelteKit's pages and endpoints, `json()`, Hono's `c.text()`).
// undici's constructor converts the init through webidl, copies the headers and builds a
// byte ReadableStream around the body, which the sender then reads back chunk by chunk;
// counted, that was most of what mount() still cost over a plain route. The light one keeps
// the body as it was given, its `headers` a real Headers (SvelteKit sets and reads them), and
// mount() and @tachyon/sveltekit write it with one `res.end(body)` (sendLightResponse). It
// answers status, headers and the whole-body reads itself, passes `instanceof Response`,
// and makes the real Response (delegating to it from then on) when anything else is touched:
// `body`, blob(), formData(), … Any other body or init (a stream, a Blob, FormData, a
// statusText, a Response as init, a status undici would refuse) gets undici's own Response,
// with undici's own errors, as @hono/node-server does with its global Response.
import type { Response } from '../http/io/response.ts';
import { forwardTheRest } from './forward.ts';
import { headerLines, headersOf, type HeaderLines } from './web-response-headers.ts';

const WebResponse = globalThis.Response;
const WebHeaders = globalThis.Headers;
const utf8 = new TextDecoder();
const utf8Encoder = new TextEncoder();
/** Statuses whose response has no body: undici refuses one with a body (the real constructor throws). 101 and 103 are outside the light range (200–599). */
const nullBodyStatus = (status: number): boolean => status === 204 || status === 205 || status === 304;
const TEXT_TYPE = 'text/plain;charset=UTF-8';

const bodyUsed = () => new TypeError('Body is unusable: Body has already been read');

type Source = string | Uint8Array<ArrayBuffer> | null;

// Assigned in LightResponse's static block (it reads the private members) for sendLightResponse.
/** Writes a response neither read nor made real to `res` (then marked read) and answers true; else false. */
let sendUnsent: (web: LightResponse, res: Response) => boolean;

export class LightResponse {
  readonly #source: Source;
  readonly #status: number;
  /** A plain record's headers as checked lines (web-response-headers.ts), until `headers` is read. */
  #lines: HeaderLines | undefined;
  #headers: Headers | undefined;
  #real: globalThis.Response | undefined = undefined;
  #used = false;

  constructor(source: Source, status: number, headers: Headers | HeaderLines) {
    this.#source = source;
    this.#status = status;
    if (headers instanceof WebHeaders) this.#headers = headers;
    else this.#lines = headers;
  }

  get status(): number {
    return this.#status;
  }
  get ok(): boolean {
    return this.#status >= 200 && this.#status <= 299;
  }
  get statusText(): string {
    return '';
  }
  /** A real Headers, made from the lines when first read: from then on it is the one sent. */
  get headers(): Headers {
    if (this.#headers === undefined) {
      this.#headers = headersOf(this.#lines!);
      this.#lines = undefined;
    }
    return this.#headers;
  }
  get type(): globalThis.Response['type'] {
    return 'default';
  }
  get url(): string {
    return '';
  }
  get redirected(): boolean {
    return false;
  }
  get body(): ReadableStream<Uint8Array> | null {
    if (this.#real === undefined && this.#source === null) return null;
    return this.#materialize().body;
  }
  get bodyUsed(): boolean {
    return this.#used || (this.#real?.bodyUsed ?? false);
  }

  text(): Promise<string> {
    if (this.#real !== undefined) return this.#real.text();
    return this.#take().then(asText);
  }
  json(): Promise<any> {
    if (this.#real !== undefined) return this.#real.json();
    return this.#take().then((s) => JSON.parse(asText(s)));
  }
  arrayBuffer(): Promise<ArrayBuffer> {
    if (this.#real !== undefined) return this.#real.arrayBuffer();
    return this.#take().then((s) => asBytes(s).buffer);
  }
  bytes(): Promise<Uint8Array<ArrayBuffer>> {
    if (this.#real !== undefined) return this.#real.bytes();
    return this.#take().then(asBytes);
  }
  clone(): globalThis.Response {
    if (this.bodyUsed) throw new TypeError('Response.clone: Body has already been consumed.');
    // Headers copied (lines are never changed, so shared): the clone's changes are its own, as undici's clone() does.
    const headers = this.#lines ?? new WebHeaders(this.#headers);
    if (this.#real === undefined) return new LightResponse(this.#source, this.#status, headers) as never;
    return new WebResponse(this.#real.clone().body, { status: this.#status, headers: this.headers });
  }

  /** The body as given, once; a null body can be read any number of times (undici's bodyUsed stays false). */
  #take(): Promise<Source> {
    if (this.#used) return Promise.reject(bodyUsed());
    if (this.#source !== null) this.#used = true;
    return Promise.resolve(this.#source);
  }

  /** The real Response: made once, when something this object does not answer itself is used. */
  #materialize(): globalThis.Response {
    if (this.#real !== undefined) return this.#real;
    const real = new WebResponse(this.#source, { status: this.#status, headers: this.headers });
    // Read already (text(), json(), …): left as undici leaves a read body, disturbed and locked,
    // so blob(), `body` and the sender refuse it as they refuse undici's.
    if (this.#used) real.arrayBuffer().catch(() => {});
    this.#real = real;
    return real;
  }

  static {
    // Fields read in place: no tuple of them per response.
    sendUnsent = (web, res) => {
      if (web.#real !== undefined || web.#used) return false;
      const source = web.#source;
      web.#used = source !== null;
      res.status(web.#status);
      const lines = web.#lines;
      if (lines !== undefined) for (let i = 0; i < lines.length; i += 2) res.appendHeader(lines[i]!, lines[i + 1]!);
      else web.#headers!.forEach(appendHeader, res);
      if (source === null) res.end();
      else res.end(source);
      return true;
    };
    forwardTheRest<LightResponse>(LightResponse.prototype, WebResponse.prototype, (self) => self.#materialize());
  }
}

const asText = (s: Source): string => (s === null ? '' : typeof s === 'string' ? s : utf8.decode(s));
const asBytes = (s: Source): Uint8Array<ArrayBuffer> =>
  s === null ? new Uint8Array(0) : typeof s === 'string' ? utf8Encoder.encode(s) : new Uint8Array(s);

/** The lines of no header, and of a string body's default type. */
const NO_LINES: HeaderLines = Object.freeze([]);
const TEXT_LINES: HeaderLines = Object.freeze(['content-type', TEXT_TYPE]);
const JSON_TYPE = 'application/json';

/**
 * The light Response for `new Response(body, init)`, or undefined where undici's own must be
 * made: a body other than a string or bytes, an init that is not a plain object, a
 * statusText, a status that is not an integer from 200 to 599, or a body on a null-body status.
 * `type`: the Content-Type a string body gets when its headers name none.
 */
function lightResponse(body: unknown, init: unknown, type = TEXT_TYPE): LightResponse | undefined {
  let source: Source;
  if (body === undefined || body === null) source = null;
  else if (typeof body === 'string') source = body;
  // A copy, as undici takes: the caller may reuse its buffer.
  else if (body instanceof Uint8Array) source = new Uint8Array(body);
  else return undefined;
  const defaultType = typeof source === 'string' ? type : undefined;
  let status = 200;
  let headers: Headers | HeaderLines;
  if (init === undefined || init === null) headers = defaultType === undefined ? NO_LINES : linesOfType(defaultType);
  else {
    const proto = typeof init === 'object' ? Object.getPrototypeOf(init) : undefined;
    if (proto !== Object.prototype && proto !== null) return undefined;
    const o = init as ResponseInit;
    if (o.statusText !== undefined) return undefined;
    if (o.status !== undefined) {
      if (!Number.isInteger(o.status) || o.status < 200 || o.status > 599) return undefined;
      status = o.status;
    }
    headers = headersOfInit(o.headers, defaultType);
  }
  if (source !== null && nullBodyStatus(status)) return undefined;
  return new LightResponse(source, status, headers);
}

const linesOfType = (type: string): HeaderLines => (type === TEXT_TYPE ? TEXT_LINES : ['content-type', type]);

/** A plain record's checked lines (web-response-headers.ts) where it has nothing unusual; else undici's Headers. */
function headersOfInit(init: HeadersInit | undefined, defaultType: string | undefined): Headers | HeaderLines {
  if (init === undefined) return defaultType === undefined ? NO_LINES : linesOfType(defaultType);
  if (typeof init === 'object' && init !== null) {
    const proto = Object.getPrototypeOf(init);
    const lines = proto === Object.prototype || proto === null ? headerLines(init, defaultType) : undefined;
    if (lines !== undefined) return lines;
  }
  // Invalid names or values throw here, a TypeError as undici's constructor throws.
  const headers = new WebHeaders(init);
  if (defaultType !== undefined && !headers.has('content-type')) headers.set('content-type', defaultType);
  return headers;
}

/**
 * `Response.json(data, init)` as a light Response (the JSON text its body, `application/json`
 * its default type), or undici's own where `new Response` would not be light. There,
 * `data` is serialised a second time (a `toJSON` runs twice): only for a statusText, an
 * unusual init or status, which undici then refuses or answers.
 */
function json(data: unknown, init?: ResponseInit): globalThis.Response {
  if (arguments.length > 0) {
    const text: string | undefined = JSON.stringify(data);
    const light = text === undefined ? undefined : lightResponse(text, init, JSON_TYPE);
    if (light !== undefined) return light as unknown as globalThis.Response;
  }
  return Reflect.apply(WebResponse.json, WebResponse, arguments) as globalThis.Response;
}

let original: typeof WebResponse | undefined;
const descriptor = { writable: true, enumerable: false, configurable: true };

/**
 * Replaces the global `Response` with one whose `new Response(string | bytes | null, init)`
 * makes a light Response, and so does `Response.json(data, init)` (`lightResponses(false)`
 * puts undici's back). Everything else — `Response.error()`, `Response.redirect()`,
 * `instanceof Response`, subclasses, other bodies — is undici's. Process-wide, as any
 * global: `app.mount()` turns it on unless told not to, @tachyon/sveltekit for `node build`.
 */
export function lightResponses(on = true): void {
  if (!on) {
    if (original !== undefined) Object.defineProperty(globalThis, 'Response', { ...descriptor, value: original });
    original = undefined;
    return;
  }
  if (original !== undefined) return;
  original = globalThis.Response;
  // A function standing in for undici's class rather than a Proxy of it: a Proxy's construct
  // trap is looked up on its handler and given its arguments as a new array on every
  // `new Response()`. It shares undici's prototype (so `instanceof Response` holds for undici's
  // Responses and light ones, and subclasses extend undici's), inherits its statics
  // (error(), redirect()) and replaces json().
  const response = function Response(body?: unknown, init?: unknown): object {
    // Called without `new`: undici's class throws its own TypeError.
    if (new.target === undefined) return (WebResponse as unknown as (b: unknown, i: unknown) => object)(body, init);
    if (new.target === (response as unknown)) return lightResponse(body, init) ?? new WebResponse(body as BodyInit, init as ResponseInit);
    return Reflect.construct(WebResponse, [body, init], new.target);
  } as unknown as typeof WebResponse;
  Object.defineProperty(response, 'length', { value: WebResponse.length });
  Object.defineProperty(response, 'prototype', { value: WebResponse.prototype });
  Object.setPrototypeOf(response, WebResponse);
  Object.defineProperty(response, 'json', { ...descriptor, value: json });
  Object.defineProperty(globalThis, 'Response', { ...descriptor, value: response });
}
/** A Headers' forEach callback (module-level: no closure per response). */
function appendHeader(this: Response, value: string, name: string): void {
  this.appendHeader(name, value);
}

/**
 * Writes a light Response nobody has read yet with one `res.end(body)` (the normal path of a
 * string or bytes: Content-Length, dedup, compression) and answers true; false for any other
 * Response, which the caller hands to the route as usual (streamed).
 */
export function sendLightResponse(web: globalThis.Response, res: Response): boolean {
  // Answered already, or the client left: the route's own path decides what to report.
  if (res.headersSent) return false;
  return web instanceof LightResponse && sendUnsent(web, res);
}
