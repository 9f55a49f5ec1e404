// The web-standard bridge: runs any `(Request, ctx) => Response` handler (SvelteKit's
// server.respond, a Hono app's fetch, …) on Tachyon. The web Request is built straight
// from uWS data — no Node IncomingMessage shim — with the body as a ReadableStream that
// pulls from the socket (uWS pause/resume underneath), and the returned Response goes
// through the normal response path (status, multi-value headers, streamed body).
import { HttpError } from '../http/errors.ts';
import type { Request } from '../http/io/request.ts';
import type { Handler } from '../http/types.ts';

export interface FetchContext {
  /** Client address (honours trustProxy). */
  ip: string;
  /** Aborts when the client goes away. */
  signal: AbortSignal;
  /** The Tachyon request, for anything else (cookies, locals, raw headers). */
  req: Request;
}

export type FetchHandler = (request: globalThis.Request, ctx: FetchContext) => globalThis.Response | Promise<globalThis.Response>;

const HOST = /^[A-Za-z0-9.\-_~]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

export function fetchRoute(handler: FetchHandler, options: { stripPrefix?: string }): Handler<Request> {
  const strip = options.stripPrefix && options.stripPrefix !== '/' ? options.stripPrefix : '';
  return (req) => handler(toWebRequest(req, strip), new BridgeContext(req));
}

/** The handler's second argument: the client address and signal are worked out when read. */
class BridgeContext implements FetchContext {
  readonly req: Request;
  constructor(req: Request) {
    this.req = req;
  }
  get ip(): string {
    return this.req.ip;
  }
  get signal(): AbortSignal {
    return this.req.signal;
  }
}

/**
 * The web Request handed to fetch handlers. Its `signal` is Tachyon's `req.signal`, made
 * when first read: undici follows a signal passed to its constructor with a listener, a
 * WeakRef and a FinalizationRegistry entry per request — most handlers (SvelteKit's pages
 * and endpoints) never look at it. `clone()` and `new Request(url, request)` follow the
 * client too; `new Request(request)` and `fetch(request)` alone read
 * undici's own field and do not (pass `{ signal: request.signal }` to forward it).
 */
class BridgeRequest extends globalThis.Request {
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
    return new globalThis.Request(super.clone(), { signal: this.signal, duplex: 'half' } as RequestInit);
  }
}

/**
 * Builds a web Request from a Tachyon request (call while the handler runs). `origin`
 * (`https://example.com`, no trailing slash) replaces the protocol and Host header in the
 * URL: for apps behind a proxy that know their public origin (SvelteKit's ORIGIN).
 */
export function toWebRequest(req: Request, stripPrefix = '', origin?: string): globalThis.Request {
  let path = req.url;
  if (stripPrefix && (path === stripPrefix || path.startsWith(stripPrefix + '/') || path.startsWith(stripPrefix + '?'))) {
    path = path.slice(stripPrefix.length);
    if (!path.startsWith('/')) path = '/' + path;
  }
  const href = `${origin ?? `${req.protocol}://${requestHost(req)}`}${path}`;
  const method = req.method;
  const hasBody = method !== 'GET' && method !== 'HEAD' && req.hasBody;
  const init = {
    method,
    // A plain record: undici copies it into the Request's own header list (a Headers built
    // here would be copied a second time, through its iterator).
    headers: req.headers,
    body: hasBody ? bodyStream(req) : null,
    duplex: 'half', // required by undici for streamed bodies, missing from lib.dom's RequestInit
  } as RequestInit;
  try {
    // The string is parsed once, by the Request (a URL object would be serialised and parsed again).
    return new BridgeRequest(href, init, req);
  } catch (err) {
    if (!URL.canParse(href)) throw new HttpError(400, 'Malformed request URL');
    throw err;
  }
}

function requestHost(req: Request): string {
  const hostHeader = req.header('host');
  // A Host header is client input: never let it change the URL's shape.
  return hostHeader !== undefined && HOST.test(hostHeader) ? hostHeader : 'localhost';
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
