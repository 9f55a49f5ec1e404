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
  return (req) => {
    const request = toWebRequest(req, strip);
    return handler(request, { ip: req.ip, signal: request.signal, req });
  };
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
  let url: URL;
  try {
    url = new URL(`${origin ?? `${req.protocol}://${requestHost(req)}`}${path}`);
  } catch {
    throw new HttpError(400, 'Malformed request URL');
  }
  const method = req.method;
  const headers = new Headers();
  const all = req.headers;
  for (const name in all) headers.set(name, all[name]!);
  const hasBody = method !== 'GET' && method !== 'HEAD' && req._hasBody();
  return new globalThis.Request(url, {
    method,
    headers,
    body: hasBody ? bodyStream(req) : null,
    signal: req.signal,
    // @ts-expect-error: `duplex` is required by undici for streamed bodies but missing from lib.dom.
    duplex: 'half',
  });
}

function requestHost(req: Request): string {
  const hostHeader = req._header('host');
  // A Host header is client input: never let it change the URL's shape.
  return hostHeader !== undefined && HOST.test(hostHeader) ? hostHeader : 'localhost';
}

function bodyStream(req: Request): ReadableStream<Uint8Array> | null {
  const reader = req._bodyReader();
  if (reader === null) return null;
  const chunks = reader.chunksAsTheyArrive();
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
