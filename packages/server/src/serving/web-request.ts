// The web Request handed to fetch handlers, in two forms:
// - LightRequest (the usual one): an object whose prototype chain runs through
//   Request.prototype (`instanceof Request` holds) that answers `method`, `url`, `headers`,
//   `signal` and the body reads (text, json, arrayBuffer, bytes) from the Tachyon request
//   itself, and builds the real undici Request only when anything else is touched (`body`,
//   clone(), formData(), blob(), cache, mode, …), delegating to it from then on. Building an
//   undici Request (URL parsing, a header list copied and validated, an AbortController, a
//   body stream) is most of what mount() cost over a plain route; SvelteKit's pages and
//   endpoints, and Hono's routing, read only the members answered here. undici's own
//   `new Request(light)` and `fetch(light)` read its private state instead of its members:
//   web-globals.ts hands them the real Request (realRequestOf) through the global Request
//   and fetch.
// - BridgeRequest: a real undici Request, for what the light one cannot be (see toWebRequest).
import type { Request } from '../http/io/request.ts';
import { forwardTheRest } from './forward.ts';
import { LightHeaders } from './web-headers.ts';

const WebRequest = globalThis.Request;
/** Decodes as undici's text() does: UTF-8, a byte order mark dropped. */
const utf8 = new TextDecoder();

/**
 * A real undici Request whose `signal` is Tachyon's `req.signal`, made when first read:
 * undici follows a signal passed to its constructor with a listener, a WeakRef and a
 * FinalizationRegistry entry per request, and most handlers never look at it.
 */
export class BridgeRequest extends WebRequest {
  readonly #req: Request;
  constructor(url: string, init: RequestInit, req: Request) {
    super(url, init);
    this.#req = req;
  }
  override get signal(): AbortSignal {
    return this.#req.signal;
  }
  /** undici's clone() links the copy to the parent's own controller, which never aborts here. */
  override clone(): globalThis.Request {
    return new WebRequest(super.clone(), { signal: this.signal, duplex: 'half' } as RequestInit);
  }
}

/** The init of the real Request for `req` (headers: the light request's own, when it made them). */
export function requestInit(req: Request, headers: Headers | Record<string, string>, withBody: boolean): RequestInit {
  return {
    method: req.method,
    // A plain record: undici copies it into the Request's own header list (a Headers built
    // here would be copied a second time, through its iterator).
    headers,
    body: withBody && hasBody(req) ? bodyStream(req) : null,
    duplex: 'half', // required by undici for streamed bodies, missing from lib.dom's RequestInit
  } as RequestInit;
}

function hasBody(req: Request): boolean {
  const method = req.method;
  return method !== 'GET' && method !== 'HEAD' && req.hasBody;
}

function bodyStream(req: Request): ReadableStream<Uint8Array> {
  // The request's own iterator: chunks as they arrive, the socket paused between reads.
  const chunks = req[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(new Uint8Array(next.value.buffer, next.value.byteOffset, next.value.byteLength));
      },
      async cancel() {
        await chunks.return(undefined);
      },
    },
    { highWaterMark: 0 }, // pull only when the handler reads: the socket stays paused otherwise
  );
}

/**
 * The undici Request behind a light one, made now if need be: what `new Request(light)` and
 * `fetch(light)` are given instead (web-globals.ts). Throws as undici does for a used body.
 */
// Assigned in LightRequest's static block, which can read its private members.
export let realRequestOf: (light: LightRequest) => globalThis.Request;

const bodyUsed = () => new TypeError('Body is unusable: Body has already been read');
const EMPTY = new Uint8Array(0);
const decode = (bytes: Uint8Array): string => utf8.decode(bytes);
const parseJson = (bytes: Uint8Array): any => JSON.parse(utf8.decode(bytes));
/** A copy the handler owns: the collected bytes may sit in a pooled buffer shared with others. */
const ownBytes = (bytes: Uint8Array): Uint8Array<ArrayBuffer> => new Uint8Array(bytes);
const ownBuffer = (bytes: Uint8Array): ArrayBuffer => new Uint8Array(bytes).buffer;

/**
 * The light web Request. Built only for a URL already in the form a parser gives back and a
 * method undici would not change (toWebRequest checks both), so what it answers equals what
 * the real Request would.
 */
export class LightRequest {
  readonly #req: Request;
  readonly #url: string;
  #headers: LightHeaders | Headers | undefined = undefined;
  #real: globalThis.Request | undefined = undefined;
  /** The body was read through text()/json()/arrayBuffer()/bytes() without a stream. */
  #consumed = false;

  constructor(req: Request, url: string) {
    this.#req = req;
    this.#url = url;
  }

  get method(): string {
    return this.#req.method;
  }
  get url(): string {
    return this.#url;
  }
  /** The request's own headers behind the Headers interface (web-headers.ts); the real Request's once it exists. */
  get headers(): Headers {
    return (this.#headers ??= this.#real?.headers ?? new LightHeaders(this.#req)) as Headers;
  }
  /** Tachyon's `req.signal`: made when first read, aborted when the client leaves. */
  get signal(): AbortSignal {
    return this.#req.signal;
  }
  get body(): ReadableStream<Uint8Array> | null {
    if (this.#real === undefined && !this.#consumed && !hasBody(this.#req)) return null;
    return this.#materialize().body;
  }
  get bodyUsed(): boolean {
    return this.#consumed || (this.#real?.bodyUsed ?? false);
  }

  text(): Promise<string> {
    return this.#real === undefined || this.#consumed ? this.#bytes().then(decode) : this.#real.text();
  }
  json(): Promise<any> {
    return this.#real === undefined || this.#consumed ? this.#bytes().then(parseJson) : this.#real.json();
  }
  arrayBuffer(): Promise<ArrayBuffer> {
    return this.#real === undefined || this.#consumed ? this.#bytes().then(ownBuffer) : this.#real.arrayBuffer();
  }
  bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return this.#real === undefined || this.#consumed ? this.#bytes().then(ownBytes) : this.#real.bytes();
  }
  formData(): Promise<FormData> {
    return this.#consumed ? Promise.reject(bodyUsed()) : this.#materialize().formData();
  }
  blob(): Promise<Blob> {
    return this.#consumed ? Promise.reject(bodyUsed()) : this.#materialize().blob();
  }
  clone(): globalThis.Request {
    if (this.#consumed) throw bodyUsed();
    return new WebRequest(this.#materialize().clone(), { signal: this.signal, duplex: 'half' } as RequestInit);
  }

  /** The whole body, read from the socket (up to the body limit: 413) without a stream in between. */
  #bytes(): Promise<Uint8Array> {
    if (this.#consumed) return Promise.reject(bodyUsed());
    this.#consumed = true;
    return hasBody(this.#req) ? this.#req.bytes() : Promise.resolve(EMPTY);
  }

  /** The real Request: made once, when something this object does not answer itself is used. */
  #materialize(): globalThis.Request {
    if (this.#real !== undefined) return this.#real;
    const headers = this.#headers instanceof LightHeaders ? this.#headers.init : (this.#headers ?? this.#req.headers);
    const init = requestInit(this.#req, headers, !this.#consumed);
    // `new Request(request)` and fetch(request) follow the signal undici holds privately: this
    // one is Tachyon's, so a proxied upstream call is cancelled when the client leaves.
    init.signal = this.#req.signal;
    const real = new WebRequest(this.#url, init);
    // Once the bytes went to text()/json()/…, the real one is made without a body.
    this.#real = real;
    return real;
  }

  static {
    realRequestOf = (light) => {
      // As undici refuses a Request whose body was read: the real one would go without it.
      if (light.#consumed && hasBody(light.#req))
        throw new TypeError('Cannot construct a Request with a Request object that has already been used.');
      return light.#materialize();
    };
    // cache, mode, the inspector's hook, …: to the real Request.
    forwardTheRest<LightRequest>(LightRequest.prototype, WebRequest.prototype, (self) => self.#materialize());
  }
}
