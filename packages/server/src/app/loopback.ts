// `app.request()`: a web Request answered by the app's real stack, for tests without a port
// to manage. The app listens on an internal ephemeral port on 127.0.0.1, opened on the first
// call and closed again once no request is pending for a moment (so a test process can exit
// without app.close()), and the request travels over a real loopback connection: uWS's own
// parser, router and writes, every step of the lifecycle exactly as in production. Why not a
// fake uWS request/response pair: it would re-implement uWS's router, HEAD/Content-Length
// handling, corking and backpressure, and tests would pass against the imitation
// (docs/testing.md). The cost is a connection per burst of requests, about a millisecond.
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { listenOn } from './server.ts';
import { loadUws, type UwsApp, type UwsListenSocket } from '../uws/index.ts';

/** How long the internal port stays open after the last pending request (ms). */
const LINGER_MS = 50;
/** Statuses whose web Response must have a null body. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export class Loopback {
  private readonly startApp: () => Promise<UwsApp>;
  private socket: UwsListenSocket | null = null;
  private port = 0;
  private opening: Promise<number> | null = null;
  private agent: Agent | null = null;
  private pending = 0;
  private linger: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(startApp: () => Promise<UwsApp>) {
    this.startApp = startApp;
  }

  async request(input: string | URL | globalThis.Request, init?: RequestInit): Promise<globalThis.Response> {
    if (this.closed) throw new Error('app.request(): the app is closed');
    const web = toWebRequest(input, init);
    const body = web.body === null ? null : Buffer.from(await web.arrayBuffer());
    this.pending++;
    if (this.linger !== null) {
      clearTimeout(this.linger);
      this.linger = null;
    }
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      this.done();
    };
    try {
      const port = await this.open();
      const incoming = await send(web, body, port, this.agent!);
      return await toWebResponse(web.method, incoming, finish);
    } catch (err) {
      finish();
      throw err;
    }
  }

  /** Closes the internal port now (app.close(), or the server shutting down). Idempotent. */
  close(): void {
    this.closed = true;
    this.shut();
  }

  private async open(): Promise<number> {
    if (this.socket !== null) return this.port;
    this.opening ??= (async () => {
      const uws = await this.startApp();
      const { socket, port } = await listenOn(uws, '127.0.0.1', 0);
      if (this.closed) {
        loadUws().us_listen_socket_close(socket);
        throw new Error('app.request(): the app is closed');
      }
      this.socket = socket;
      this.port = port;
      this.agent = new Agent({ keepAlive: true });
      return port;
    })().finally(() => (this.opening = null));
    return this.opening;
  }

  private done(): void {
    if (--this.pending > 0 || this.closed) return;
    this.linger = setTimeout(() => {
      this.linger = null;
      if (this.pending === 0) this.shut();
    }, LINGER_MS);
  }

  private shut(): void {
    if (this.linger !== null) clearTimeout(this.linger);
    this.linger = null;
    if (this.socket !== null) loadUws().us_listen_socket_close(this.socket);
    this.socket = null;
    // Client side of the keep-alive connections: the server sees them close.
    this.agent?.destroy();
    this.agent = null;
  }
}

function toWebRequest(input: string | URL | globalThis.Request, init?: RequestInit): globalThis.Request {
  if (typeof input === 'string' && input.startsWith('/')) return new globalThis.Request(new URL(input, 'http://localhost'), init);
  if (typeof input === 'string' || input instanceof URL) return new globalThis.Request(input, init);
  if (input instanceof globalThis.Request) return init === undefined ? input : new globalThis.Request(input, init);
  throw new TypeError('app.request() takes a path ("/users/1"), a URL or a web Request');
}

function send(web: globalThis.Request, body: Buffer | null, port: number, agent: Agent): Promise<IncomingMessage> {
  const url = new URL(web.url);
  const headers: Record<string, string | string[]> = {};
  web.headers.forEach((value, key) => {
    if (key !== 'set-cookie') headers[key] = value;
  });
  headers.host ??= url.host;
  if (body !== null) headers['content-length'] = String(body.byteLength);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method: web.method, path: url.pathname + url.search, headers, agent, signal: web.signal },
      resolve,
    );
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

/**
 * A body of known length is read in full before the Response is returned (the connection is
 * free again at once); a chunked one (SSE, res.stream()) is handed over as a stream, and the
 * connection stays busy until it is read to the end or cancelled.
 */
async function toWebResponse(method: string, incoming: IncomingMessage, done: () => void): Promise<globalThis.Response> {
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  const status = incoming.statusCode ?? 0;
  const init = { status, statusText: incoming.statusMessage, headers };
  if (method === 'HEAD' || NULL_BODY.has(status)) {
    incoming.resume();
    incoming.once('close', done);
    return new globalThis.Response(null, init);
  }
  if (incoming.headers['content-length'] !== undefined) {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of incoming) chunks.push(chunk as Buffer);
    } finally {
      done();
    }
    return new globalThis.Response(Buffer.concat(chunks), init);
  }
  incoming.once('close', done);
  return new globalThis.Response(Readable.toWeb(incoming) as ReadableStream<Uint8Array>, init);
}
