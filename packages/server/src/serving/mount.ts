// The web-standard bridge: runs any `(Request, ctx) => Response` handler (SvelteKit's
// server.respond, a Hono app's fetch, …) on Tachyon. The web Request is built straight
// from uWS data — no Node IncomingMessage shim — with the body as a ReadableStream that
// pulls from the socket (uWS pause/resume underneath), and the returned Response goes
// through the normal response path (status, multi-value headers, streamed body).
import { HttpError } from '../http/errors.ts';
import type { Request } from '../http/io/request.ts';
import type { Response } from '../http/io/response.ts';
import { isPromise } from '../http/send-value.ts';
import type { Handler } from '../http/types.ts';
import { acceptLightRequests } from './web-globals.ts';
import { BridgeRequest, LightRequest, requestInit } from './web-request.ts';
import { lightResponses, sendLightResponse } from './web-response.ts';
import { webUrl } from './web-url.ts';

export interface FetchContext {
  /** Client address (honours trustProxy). */
  ip: string;
  /** Aborts when the client goes away. */
  signal: AbortSignal;
  /** The Tachyon request, for anything else (cookies, locals, raw headers). */
  req: Request;
}

export type FetchHandler = (request: globalThis.Request, ctx: FetchContext) => globalThis.Response | Promise<globalThis.Response>;

const REAL: WebRequestOptions = Object.freeze({ real: true });

export function fetchRoute(
  handler: FetchHandler,
  options: { stripPrefix?: string; realRequest?: boolean; lightResponses?: boolean },
): Handler<Request> {
  const strip = options.stripPrefix && options.stripPrefix !== '/' ? options.stripPrefix : '';
  const web = options.realRequest === true ? REAL : undefined;
  if (web === undefined) acceptLightRequests();
  // On by default: undici's Response constructor and the stream read back from it cost more
  // per request than the rest of the bridge (bench/README.md, "The web-standard bridge").
  if (options.lightResponses !== false) lightResponses();
  return (req, res) => {
    const out = handler(toWebRequest(req, strip, undefined, web), new BridgeContext(req));
    return isPromise(out) ? out.then((response) => sendOrReturn(response, res)) : sendOrReturn(out, res);
  };
}

/** A light Response (lightResponses()) is written here from its string or bytes; any other goes to the route. */
function sendOrReturn(response: globalThis.Response, res: Response): globalThis.Response | undefined {
  return sendLightResponse(response, res) ? undefined : response;
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
 * Methods undici hands back as they came; any other is normalised or refused by its
 * constructor. Compared, not looked up in a Set: the method is a new string per request,
 * which a Set would hash first.
 */
function plainMethod(method: string): boolean {
  switch (method) {
    case 'GET':
    case 'HEAD':
    case 'POST':
    case 'PUT':
    case 'DELETE':
    case 'OPTIONS':
    case 'PATCH':
      return true;
    default:
      return false;
  }
}

export interface WebRequestOptions {
  /**
   * A real undici Request instead of the light one. The global `Request` and `fetch` accept the
   * light one (they are given the real Request behind it); this is for code that kept
   * undici's originals before Tachyon replaced them, or brand-checks another way.
   */
  real?: boolean;
}

/**
 * Builds a web Request from a Tachyon request (call while the handler runs). `origin`
 * (`https://example.com`, no trailing slash) replaces the protocol and Host header in the
 * URL: for apps behind a proxy that know their public origin (SvelteKit's ORIGIN).
 *
 * The light Request (web-request.ts) when its answers equal the real one's: a URL already
 * in serialised form and a method undici keeps as it is. Otherwise — or with `real` — the
 * real undici Request, whose constructor normalises the URL or refuses it (400).
 */
export function toWebRequest(req: Request, stripPrefix = '', origin?: string, options?: WebRequestOptions): globalThis.Request {
  const url = webUrl(req, stripPrefix, origin);
  if (url.normal && options?.real !== true && plainMethod(req.method)) {
    acceptLightRequests();
    return new LightRequest(req, url.href) as unknown as globalThis.Request;
  }
  try {
    // The string is parsed once, by the Request (a URL object would be serialised and parsed again).
    return new BridgeRequest(url.href, requestInit(req, req.headers, true), req);
  } catch (err) {
    if (!URL.canParse(url.href)) throw new HttpError(400, 'Malformed request URL');
    throw err;
  }
}
