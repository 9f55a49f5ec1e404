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

const WebResponse = globalThis.Response;
const WebHeaders = globalThis.Headers;
const utf8 = new TextDecoder();
const utf8Encoder = new TextEncoder();
/** Statuses whose response has no body: undici refuses one with a body (the real constructor throws). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
const TEXT_TYPE = 'text/plain;charset=UTF-8';

const bodyUsed = () => new TypeError('Body is unusable: Body has already been read');

type Source = string | Uint8Array<ArrayBuffer> | null;

// Assigned in LightResponse's static block (they read its private members) for sendLightResponse.
/** Status, headers and body of a response neither read nor made real, now marked read; else undefined. */
let takeUnsent: (web: LightResponse) => [status: number, headers: Headers, source: Source] | undefined;

export class LightResponse {
  readonly #source: Source;
  readonly #status: number;
  readonly #headers: Headers;
  #real: globalThis.Response | undefined = undefined;
  #used = false;

  constructor(source: Source, status: number, headers: Headers) {
    this.#source = source;
    this.#status = status;
    this.#headers = headers;
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
  get headers(): Headers {
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
    // Headers copied: the clone's changes are its own, as undici's clone() does.
    if (this.#real === undefined) return new LightResponse(this.#source, this.#status, new WebHeaders(this.#headers)) as never;
    return new WebResponse(this.#real.clone().body, { status: this.#status, headers: this.#headers });
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
    const real = new WebResponse(this.#source, { status: this.#status, headers: this.#headers });
    // Read already (text(), json(), …): left as undici leaves a read body, disturbed and locked,
    // so blob(), `body` and the sender refuse it as they refuse undici's.
    if (this.#used) real.arrayBuffer().catch(() => {});
    this.#real = real;
    return real;
  }

  static {
    takeUnsent = (web) => {
      if (web.#real !== undefined || web.#used) return undefined;
      web.#used = web.#source !== null;
      return [web.#status, web.#headers, web.#source];
    };
    forwardTheRest<LightResponse>(LightResponse.prototype, WebResponse.prototype, (self) => self.#materialize());
  }
}

const asText = (s: Source): string => (s === null ? '' : typeof s === 'string' ? s : utf8.decode(s));
const asBytes = (s: Source): Uint8Array<ArrayBuffer> =>
  s === null ? new Uint8Array(0) : typeof s === 'string' ? utf8Encoder.encode(s) : new Uint8Array(s);

/**
 * The light Response for `new Response(body, init)`, or undefined where undici's own must be
 * made: a body other than a string or bytes, an init that is not a plain object, a
 * statusText, a status that is not an integer from 200 to 599, or a body on a null-body status.
 */
function lightResponse(body: unknown, init: unknown): LightResponse | undefined {
  let source: Source;
  if (body === undefined || body === null) source = null;
  else if (typeof body === 'string') source = body;
  // A copy, as undici takes: the caller may reuse its buffer.
  else if (body instanceof Uint8Array) source = new Uint8Array(body);
  else return undefined;
  let status = 200;
  let headers: Headers;
  if (init === undefined || init === null) headers = new WebHeaders();
  else {
    const proto = typeof init === 'object' ? Object.getPrototypeOf(init) : undefined;
    if (proto !== Object.prototype && proto !== null) return undefined;
    const o = init as ResponseInit;
    if (o.statusText !== undefined) return undefined;
    if (o.status !== undefined) {
      if (!Number.isInteger(o.status) || o.status < 200 || o.status > 599) return undefined;
      status = o.status;
    }
    // Invalid names or values throw here, a TypeError as undici's constructor throws.
    headers = new WebHeaders(o.headers);
  }
  if (source !== null && NULL_BODY.has(status)) return undefined;
  if (typeof source === 'string' && !headers.has('content-type')) headers.set('content-type', TEXT_TYPE);
  return new LightResponse(source, status, headers);
}

let original: typeof WebResponse | undefined;
const descriptor = { writable: true, enumerable: false, configurable: true };

/**
 * Replaces the global `Response` with one whose `new Response(string | bytes | null, init)`
 * makes a light Response (`lightResponses(false)` puts undici's back). Everything else —
 * `Response.json()`, `Response.error()`, `instanceof Response`, subclasses, other bodies —
 * is undici's. Process-wide, as any global: @tachyon/sveltekit turns it on for `node build`.
 */
export function lightResponses(on = true): void {
  if (!on) {
    if (original !== undefined) Object.defineProperty(globalThis, 'Response', { ...descriptor, value: original });
    original = undefined;
    return;
  }
  if (original !== undefined) return;
  original = globalThis.Response;
  const response: typeof WebResponse = new Proxy(WebResponse, {
    construct(target, args, newTarget): object {
      if (newTarget === response) return lightResponse(args[0], args[1]) ?? Reflect.construct(target, args, target);
      return Reflect.construct(target, args, newTarget);
    },
  });
  Object.defineProperty(globalThis, 'Response', { ...descriptor, value: response });
}
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
  const parts = web instanceof LightResponse ? takeUnsent(web) : undefined;
  if (parts === undefined) return false;
  const [status, headers, source] = parts;
  res.status(status);
  headers.forEach(appendHeader, res);
  if (source === null) res.end();
  else res.end(source);
  return true;
}
