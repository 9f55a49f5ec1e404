// The App: options, startup compilation onto the uWS router, listen and graceful close.
import { resolveCompression, type Compression, type CompressionOptions } from '../serving/compression.ts';
import { DedupTable } from '../serving/dedup.ts';
import { HttpError } from '../http/errors.ts';
import { fetchRoute, type FetchHandler } from '../serving/mount.ts';
import { createStatic, type StaticOptions } from '../serving/static/index.ts';
import { clientStaticOptions, resolveClientBundle, type ClientOptions } from '../serving/client-bundle.ts';
import { WsHub } from '../realtime/hub.ts';
import { CLOSE_GOING_AWAY } from '../realtime/protocol.ts';
import { checkWsBehavior, compileWsRoute, type WsBehavior, type WsRouteSpec } from '../realtime/route.ts';
import { withTlsFiles, type TlsOptions } from '../serving/tls.ts';
import { silentLogger, type Logger } from './logger.ts';
import { pickFreePort } from './free-port.ts';
import { joinPaths, parsePattern, pathInPrefix, prefixApplies, type Pattern } from '../routing/path.ts';
import { compileRoute, type RouteSpec } from '../http/compile-route.ts';
import type { Request } from '../http/io/request.ts';
import type { Response } from '../http/io/response.ts';
import { Router, type MiddlewareRecord, type RouteRecord } from '../routing/router.ts';
import { DEFAULT_BODY_LIMIT, DEFAULT_REQUEST_TIMEOUT, type Settings, type TrustProxy } from './settings.ts';
import { InflightTracker } from '../http/tracker.ts';
import type { ErrorHandler, Handler, HttpMethod, Middleware, NotFoundHandler } from '../http/types.ts';
import { loadUws, type UwsApp, type UwsHandler, type UwsListenSocket, type UwsRequest, type UwsResponse, type UwsWebSocketBehavior } from '../uws/index.ts';

export interface AppOptions {
  /**
   * Largest request body in bytes; 413 past it. Default 1 MiB. JSON parsing holds the event
   * loop for up to ~50 ms per MiB (docs/request.md, "Body limits and their cost"): raise it
   * per route, not here.
   */
  bodyLimit?: number;
  /** Secret(s) for signed cookies. The first signs; all verify (rotation). */
  cookieSecret?: string | string[];
  /** How far to trust X-Forwarded-For / X-Forwarded-Proto. Default false. */
  trustProxy?: TrustProxy;
  /** pino-compatible logger. Default: silent. */
  logger?: Logger;
  /** Milliseconds before a request nobody answered gets 503. Default 30 000; 0 disables. */
  requestTimeout?: number;
  /**
   * Largest request head (request line + headers) uWS accepts; 431 past it. Process-wide:
   * the first App sets it. Default 16 KiB (uWS alone: 4 KiB).
   */
  maxHeaderSize?: number;
  /** `/users/` vs `/users`: 'ignore' (both match, default), 'strict', or 'redirect' (308 to the declared form). */
  trailingSlash?: 'ignore' | 'strict' | 'redirect';
  /** Include error messages and stacks in 500 answers. Default: NODE_ENV === 'development'. */
  exposeErrors?: boolean;
  /** Compress responses (brotli/gzip) for every route; routes override with `compress`. Default off. */
  compression?: boolean | CompressionOptions;
  /** Serve HTTPS: key and cert as PEM text or file paths; `sni` for extra hostnames. */
  tls?: TlsOptions;
  /**
   * Coalesce `app.publish()` calls: the envelopes published to a topic within one event-loop
   * iteration go out as one frame, a JSON array (docs/protocol.md, "Batches"). Per-topic
   * order is kept. Clients must understand batches (`@tachyon/client` does). Default false.
   */
  coalescePublishes?: boolean;
}

export interface ListenOptions {
  port?: number;
  host?: string;
  /**
   * Close gracefully on SIGTERM and SIGINT (or the signals listed), then re-raise the
   * signal so the process ends the way it would have. Default false.
   */
  signals?: boolean | NodeJS.Signals[];
  /** Grace period for signal-triggered shutdowns, in ms. Default 10 000. */
  shutdownTimeout?: number;
}

export interface MountOptions {
  /** Share responses between concurrent identical anonymous GET/HEAD requests. */
  dedup?: boolean;
  /** Compress the handler's responses (overrides the app's `compression`). */
  compress?: boolean | CompressionOptions;
  /** Remove the mount prefix from the URL the handler sees. Default false. */
  stripPrefix?: boolean;
  bodyLimit?: number;
}

export interface Server {
  readonly port: number;
  readonly host: string;
  /** Stops accepting, lets in-flight requests finish (up to `timeout` ms, default 10 s), then closes every connection. */
  close(options?: { timeout?: number }): Promise<void>;
}

const UWS_METHOD = { GET: 'get', POST: 'post', PUT: 'put', PATCH: 'patch', DELETE: 'del', HEAD: 'head', OPTIONS: 'options' } as const;
const UWS_VERB = { get: 1, post: 1, put: 1, patch: 1, del: 1, head: 1, options: 1, any: 1 } as const;

interface FlatRoute {
  record: RouteRecord;
  pattern: Pattern;
  middleware: Handler<any>[];
  errorHandlers: ErrorHandler[];
}

interface ScopedMiddleware {
  prefix: string | null; // absolute; null = unconditional within its router
  handlers: Middleware[];
}

/** uWS refused the listen socket (address in use or not available). */
class ListenError extends Error {}

export class App extends Router {
  /** @internal */ readonly _settings: Settings;
  private readonly trailingSlash: 'ignore' | 'strict' | 'redirect';
  private readonly maxHeaderSize: number | undefined;
  private notFoundHandler: NotFoundHandler | undefined;
  private closeHooks: (() => unknown)[] = [];
  private uws: UwsApp | undefined;
  private tracker = new InflightTracker();
  private server: Server | undefined;
  private readonly compression: Compression | null;
  private readonly tls: TlsOptions | undefined;
  private readonly dedup = new DedupTable();
  private loading: Promise<unknown>[] = [];
  private readonly hub: WsHub;
  private readonly wsRoutes: WsRouteSpec[] = [];

  constructor(options: AppOptions = {}) {
    super();
    const o = options;
    if (o.bodyLimit !== undefined && !(Number.isInteger(o.bodyLimit) && o.bodyLimit >= 0)) throw new TypeError('bodyLimit must be a non-negative integer');
    if (o.requestTimeout !== undefined && !(Number.isFinite(o.requestTimeout) && o.requestTimeout >= 0)) throw new TypeError('requestTimeout must be >= 0 ms');
    if (o.maxHeaderSize !== undefined && !(Number.isInteger(o.maxHeaderSize) && o.maxHeaderSize >= 1024 && o.maxHeaderSize <= 1 << 20)) {
      throw new TypeError('maxHeaderSize must be an integer from 1024 to 1048576 bytes');
    }
    if (o.trailingSlash !== undefined && !['ignore', 'strict', 'redirect'].includes(o.trailingSlash)) throw new TypeError("trailingSlash must be 'ignore', 'strict' or 'redirect'");
    const secrets = o.cookieSecret === undefined ? [] : Array.isArray(o.cookieSecret) ? o.cookieSecret : [o.cookieSecret];
    if (secrets.some((s) => typeof s !== 'string' || s.length === 0)) throw new TypeError('cookieSecret must be a non-empty string or array of them');
    if (o.coalescePublishes !== undefined && typeof o.coalescePublishes !== 'boolean') throw new TypeError('coalescePublishes must be a boolean');
    this.hub = new WsHub(o.coalescePublishes ?? false);
    const tp = o.trustProxy ?? false;
    if (!(typeof tp === 'boolean' || typeof tp === 'function' || (Number.isInteger(tp) && tp >= 0))) throw new TypeError('trustProxy must be a boolean, a hop count or a function');
    this._settings = {
      bodyLimit: o.bodyLimit ?? DEFAULT_BODY_LIMIT,
      cookieSecrets: secrets,
      trustProxy: tp,
      logger: o.logger ?? silentLogger,
      requestTimeout: o.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT,
      exposeErrors: o.exposeErrors ?? process.env.NODE_ENV === 'development',
      draining: false,
    };
    this._settings.app = this;
    this.trailingSlash = o.trailingSlash ?? 'ignore';
    this.maxHeaderSize = o.maxHeaderSize;
    this.compression = resolveCompression(o.compression, null);
    if (o.tls !== undefined && (typeof o.tls !== 'object' || o.tls === null)) throw new TypeError('tls must be an object with key and cert');
    this.tls = o.tls;
  }

  /**
   * Runs a web-standard fetch handler (`(request, ctx) => Response`) for every method under
   * `prefix`: SvelteKit's server.respond, a Hono app's fetch, … See docs/serving.md.
   */
  mount(prefix: string, handler: FetchHandler, options: MountOptions = {}): this {
    if (typeof handler !== 'function') throw new TypeError('mount() needs a fetch handler function');
    const base = prefix === '/' ? '' : prefix.replace(/\/+$/, '');
    if (base !== '' && !base.startsWith('/')) throw new TypeError(`Mount prefix must start with "/": ${prefix}`);
    const route = fetchRoute(handler, { stripPrefix: options.stripPrefix ? base : '' });
    const routeOptions = { dedup: options.dedup ?? false, compress: options.compress, bodyLimit: options.bodyLimit };
    if (base !== '') this.any(base, routeOptions, route);
    this.any(`${base}/*`, routeOptions, route);
    return this;
  }

  /** Requests that outlived their uWS callback and have not finished yet. */
  get inflight(): number {
    return this.tracker.size;
  }

  get logger(): Logger {
    return this._settings.logger;
  }

  /** True once `close()` has started: readiness checks answer 503 from then on. */
  get draining(): boolean {
    return this._settings.draining;
  }

  /** Answers requests no route matched. Default: 404 `{ "error": "Not Found" }`. App middleware runs first. */
  notFound(handler: NotFoundHandler): this {
    if (typeof handler !== 'function') throw new TypeError('notFound() needs a function');
    this.notFoundHandler = handler;
    return this;
  }

  /** Runs once when the server closes, after in-flight requests finished. */
  onClose(hook: () => unknown): this {
    this.closeHooks.push(hook);
    return this;
  }

  /**
   * A WebSocket route with Tachyon's protocol (docs/protocol.md): pub/sub topics, typed
   * events with replies, raw messages. See docs/realtime.md.
   */
  ws<Data = undefined, E = {}>(path: string, behavior: WsBehavior<Data, E>): this {
    const pattern = parsePattern(path);
    checkWsBehavior(path, behavior);
    this.wsRoutes.push({ pattern, behavior });
    return this;
  }

  /** Publishes `{"topic","event","data"}` to every subscriber of `topic` (fan-out in C++). Data is serialized once. */
  publish(topic: string, event: string, data?: unknown): boolean {
    return this.hub.publish(topic, event, data);
  }

  /** Publishes a raw text or binary message to a topic, without an envelope. */
  publishRaw(topic: string, message: string | ArrayBuffer | Uint8Array, isBinary?: boolean): boolean {
    return this.hub.publishRaw(topic, message, isBinary);
  }

  /** Number of sockets subscribed to `topic`. */
  subscribers(topic: string): number {
    return this.hub.subscribers(topic);
  }

  /** Open WebSocket connections. */
  get connections(): number {
    return this.hub.connections;
  }

  /**
   * Serves the files under `dir` at `urlPrefix`, from memory (see docs/static.md). Loading
   * starts now and `listen()` waits for it. Misses go to the app's not-found handler.
   */
  static(urlPrefix: string, dir: string, options: StaticOptions = {}): this {
    const base = urlPrefix === '/' ? '' : urlPrefix.replace(/\/+$/, '');
    if (base !== '' && !base.startsWith('/')) throw new TypeError(`Static prefix must start with "/": ${urlPrefix}`);
    if (this.uws) throw new Error('app.static() must be called before listen()');
    const notFound = options.notFound ?? ((req: Request<any>, res: Response) => (this.notFoundHandler ? this.notFoundHandler(req, res) : notFoundError(req)));
    // Files carry their own precompressed variants and validators: no dynamic compression,
    // and no dedup (a 304 or 206 for one client must never reach another).
    const routeOptions = { compress: false, dedup: false };
    this.loading.push(
      createStatic(dir, { ...options, notFound }).then((files) => {
        this.onClose(() => files.close());
        if (base !== '') this.get(base, routeOptions, files.handler);
        this.get(`${base}/*`, routeOptions, files.handler);
      }),
    );
    return this;
  }

  /**
   * Serves @tachyon/client's minified browser build (one ES module) at `path`, for pages
   * without a bundler: `import { connect } from '/tachyon/client.js'` (docs/client.md).
   * Throws if @tachyon/client is not installed.
   */
  client(path = '/tachyon/client.js', options: ClientOptions = {}): this {
    if (this.uws) throw new Error('app.client() must be called before listen()');
    const bundle = resolveClientBundle();
    const staticOptions = clientStaticOptions(path, options, bundle);
    this.loading.push(
      createStatic(bundle.dir, staticOptions).then((files) => {
        this.get(path, { compress: false, dedup: false }, files.handler);
      }),
    );
    return this;
  }

  /** Starts listening. Port 0 picks a free port; the default host is 0.0.0.0. */
  async listen(port: number | ListenOptions = 0, hostOrOptions?: string | ListenOptions): Promise<Server> {
    const loading = this.loading;
    this.loading = [];
    await Promise.all(loading);
    return this.listenNow(port, hostOrOptions);
  }

  private async listenNow(port: number | ListenOptions, hostOrOptions?: string | ListenOptions): Promise<Server> {
    const extra = typeof hostOrOptions === 'string' ? { host: hostOrOptions } : (hostOrOptions ?? {});
    const opts: ListenOptions = typeof port === 'number' ? { ...extra, port } : { ...extra, ...port };
    const requested = opts.port ?? 0;
    const h = opts.host ?? '0.0.0.0';
    if (!Number.isInteger(requested) || requested < 0 || requested > 65535) throw new TypeError(`Invalid port ${requested}`);
    if (this.server) throw new Error('This app is already listening');
    // Port 0: pick the port first (see free-port.ts); another process may take it in between, so retry.
    for (let attempt = 1; ; attempt++) {
      const p = requested === 0 ? await pickFreePort(h) : requested;
      try {
        return await this.listenOn(p, h, opts);
      } catch (err) {
        if (requested !== 0 || attempt >= 3 || !(err instanceof ListenError)) throw err;
      }
    }
  }

  private listenOn(p: number, h: string, opts: ListenOptions): Promise<Server> {
    let uws: UwsApp;
    try {
      uws = this.uws ??= this.compile();
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      // Exclusive: without it uWS sets SO_REUSEPORT and a second server on the same port
      // would silently share its traffic instead of failing.
      uws.listen(h, p, loadUws().LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
        if (!socket) {
          reject(new ListenError(`Could not listen on ${h}:${p} (address in use or not available)`));
          return;
        }
        const server = this.makeServer(socket, h);
        this.server = server;
        if (opts.signals) this.closeOnSignals(server, opts.signals === true ? ['SIGTERM', 'SIGINT'] : opts.signals, opts.shutdownTimeout ?? 10_000);
        this.logger.info({ host: h, port: server.port, tls: this.tls !== undefined }, 'listening');
        resolve(server);
      });
    });
  }

  private closeOnSignals(server: Server, signals: NodeJS.Signals[], timeout: number): void {
    const onSignal = (signal: NodeJS.Signals) => {
      for (const s of signals) process.removeListener(s, onSignal);
      this.logger.info({ signal }, 'shutting down');
      void server.close({ timeout }).then(() => process.kill(process.pid, signal));
    };
    for (const s of signals) process.on(s, onSignal);
    this.onClose(() => {
      for (const s of signals) process.removeListener(s, onSignal);
    });
  }

  private makeServer(socket: UwsListenSocket, host: string): Server {
    const uwsModule = loadUws();
    const port = uwsModule.us_socket_local_port(socket);
    let closing: Promise<void> | undefined;
    return {
      port,
      host,
      close: (options = {}) =>
        (closing ??= (async () => {
          uwsModule.us_listen_socket_close(socket);
          this._settings.draining = true;
          const timeout = options.timeout ?? 10_000;
          // WebSockets never finish by themselves: ask them to go (1001) while HTTP drains.
          const sockets = this.hub.closeAll(CLOSE_GOING_AWAY, 'Server shutting down', timeout);
          let timer: NodeJS.Timeout | undefined;
          const timedOut = await Promise.race([
            this.tracker.whenIdle().then(() => false),
            new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timeout))),
          ]);
          clearTimeout(timer);
          if (timedOut) {
            this.logger.warn({ inflight: this.tracker.size }, 'close timeout: dropping in-flight requests');
            this.tracker.destroyAll();
          }
          await sockets;
          this.uws?.close();
          for (const hook of this.closeHooks) {
            try {
              await hook();
            } catch (err) {
              this.logger.error({ err }, 'onClose hook failed');
            }
          }
        })()),
    };
  }

  // ----- startup compilation -----------------------------------------------------------

  /** Flattens routers, compiles every chain once, and registers it with the uWS router. */
  private compile(): UwsApp {
    const uwsModule = loadUws(this.maxHeaderSize);
    const tls = this.tls;
    const app = tls ? withTlsFiles(tls, (o) => uwsModule.SSLApp(o)) : uwsModule.App();
    // Registrations are collected, then applied to the default router and, since uWS keeps
    // one router per SNI server name, replayed for each extra hostname.
    const registrations: ([keyof typeof UWS_VERB, string, UwsHandler] | ['ws', string, UwsWebSocketBehavior])[] = [];
    for (const spec of this.wsRoutes) registrations.push(['ws', spec.pattern.path, compileWsRoute(spec, this._settings, this.hub, uwsModule, tls !== undefined)]);
    const uws = {
      get: (p: string, h: UwsHandler) => registrations.push(['get', p, h]),
      post: (p: string, h: UwsHandler) => registrations.push(['post', p, h]),
      put: (p: string, h: UwsHandler) => registrations.push(['put', p, h]),
      patch: (p: string, h: UwsHandler) => registrations.push(['patch', p, h]),
      del: (p: string, h: UwsHandler) => registrations.push(['del', p, h]),
      head: (p: string, h: UwsHandler) => registrations.push(['head', p, h]),
      options: (p: string, h: UwsHandler) => registrations.push(['options', p, h]),
      any: (p: string, h: UwsHandler) => registrations.push(['any', p, h]),
    };
    const ctx = { settings: this._settings, tracker: this.tracker, tls: tls !== undefined, dedup: this.dedup };
    const routes: FlatRoute[] = [];
    this.flatten(this, '', [], [], routes);
    const appMiddleware = this._middleware.map((m) => ({ prefix: m.prefix, handlers: m.handlers }));
    const appErrors = this._errorHandler ? [this._errorHandler] : [];

    // Group by uWS pattern so 405/OPTIONS answers know every method of a path.
    const byPattern = new Map<string, { methods: Set<string>; hasAny: boolean }>();
    const explicitHead = new Set<string>();
    for (const r of routes) if (r.record.method === 'HEAD') for (const v of this.pathVariants(r.pattern.path)) explicitHead.add(v.path);
    const register = (method: HttpMethod | null, path: string, spec: RouteSpec) => {
      const routeSpec = { ...spec, pattern: { ...spec.pattern, path } };
      if (method === null) uws.any(path, compileRoute(routeSpec, ctx));
      else {
        uws[UWS_METHOD[method]](path, compileRoute(routeSpec, ctx));
        if (method === 'GET' && !explicitHead.has(path)) uws.head(path, compileRoute(routeSpec, ctx, true));
      }
      const entry = byPattern.get(path) ?? { methods: new Set<string>(), hasAny: false };
      if (method === null) entry.hasAny = true;
      else {
        entry.methods.add(method);
        if (method === 'GET') entry.methods.add('HEAD');
      }
      byPattern.set(path, entry);
    };

    for (const r of routes) {
      const spec = this.specFor(r);
      for (const variant of this.pathVariants(r.pattern.path)) {
        if (variant.redirect) uws.any(variant.path, redirectToggleSlash);
        else register(r.record.method, variant.path, spec);
      }
    }

    // Paths with some methods: OPTIONS → 204 with Allow, anything else → 405.
    for (const [path, entry] of byPattern) {
      if (entry.hasAny || path === '/*') continue; // a catch-all: other methods are simply not found
      const allow = [...entry.methods, ...(entry.methods.has('OPTIONS') ? [] : ['OPTIONS'])].join(', ');
      const pattern = parsePattern(path);
      const handler: Handler<any> = (req, res) => {
        res.header('allow', allow);
        if (req.method === 'OPTIONS') return res.status(204).end();
        throw new HttpError(405, `Method ${req.method} not allowed on ${req.path}`, { headers: { allow } });
      };
      const spec = this.virtualSpec(pattern, appMiddleware, appErrors, handler);
      uws.any(path, compileRoute(spec, ctx));
    }

    // Everything else: the not-found handler, behind the app's middleware.
    if (!byPattern.get('/*')?.hasAny) {
      const notFound = this.notFoundHandler;
      const handler: Handler<any> = notFound ? (req, res) => notFound(req, res) : notFoundError;
      uws.any('/*', compileRoute(this.virtualSpec(parsePattern('/*'), appMiddleware, appErrors, handler), ctx));
    }
    const apply = () => {
      for (const r of registrations) {
        if (r[0] === 'ws') app.ws(r[1], r[2]);
        else app[r[0]](r[1], r[2]);
      }
    };
    apply();
    for (const [hostname, identity] of Object.entries(tls?.sni ?? {})) {
      withTlsFiles(identity, (o) => app.addServerName(hostname, o));
      app.domain(hostname);
      apply();
    }
    this.hub.attach(app);
    return app;
  }

  private flatten(router: Router, prefix: string, inherited: ScopedMiddleware[], errors: ErrorHandler[], out: FlatRoute[]): void {
    const scoped = [...inherited, ...router._middleware.map((m: MiddlewareRecord) => ({ prefix: m.prefix === null ? null : joinPaths(prefix, m.prefix), handlers: m.handlers }))];
    const errorChain = router._errorHandler ? [router._errorHandler, ...errors] : errors;
    for (const record of router._routes) {
      const pattern = parsePattern(joinPaths(prefix, record.path));
      out.push({ record, pattern, middleware: middlewareFor(pattern, scoped), errorHandlers: errorChain });
    }
    for (const child of router._children) this.flatten(child.router, joinPaths(prefix, child.prefix), scoped, errorChain, out);
  }

  private specFor(r: FlatRoute): RouteSpec {
    const o = r.record.options;
    return {
      method: r.record.method,
      pattern: r.pattern,
      middleware: r.middleware,
      handlers: r.record.handlers,
      schemas: { params: o.params, query: o.query, body: o.body, headers: o.headers, cookies: o.cookies },
      consumes: o.consumes ?? ['json'],
      bodyLimit: o.bodyLimit ?? this._settings.bodyLimit,
      timeout: o.timeout ?? this._settings.requestTimeout,
      errorHandlers: r.errorHandlers,
      compression: resolveCompression(o.compress, this.compression),
      dedup: o.dedup ?? false,
    };
  }

  private virtualSpec(pattern: Pattern, mw: ScopedMiddleware[], errors: ErrorHandler[], handler: Handler<any>): RouteSpec {
    return {
      method: null,
      pattern,
      middleware: middlewareFor(pattern, mw),
      handlers: [handler],
      schemas: {},
      consumes: ['json'],
      bodyLimit: this._settings.bodyLimit,
      timeout: this._settings.requestTimeout,
      errorHandlers: errors,
      compression: this.compression,
      dedup: false,
    };
  }

  /** The uWS patterns one declared path occupies under the trailing-slash policy. */
  private pathVariants(path: string): { path: string; redirect?: true }[] {
    if (path === '/' || path.endsWith('*') || this.trailingSlash === 'strict') return [{ path }];
    const other = path.endsWith('/') ? path.slice(0, -1) : `${path}/`;
    if (this.trailingSlash === 'ignore') return [{ path }, { path: other }];
    return [{ path }, { path: other, redirect: true }];
  }
}

/** Middleware that applies to a route, with a runtime path check only where a :param overlaps the prefix. */
function middlewareFor(pattern: Pattern, scoped: ScopedMiddleware[]): Handler<any>[] {
  const out: Handler<any>[] = [];
  for (const m of scoped) {
    const applies = m.prefix === null ? 'always' : prefixApplies(m.prefix, pattern);
    if (applies === 'never') continue;
    for (const h of m.handlers) {
      if (applies === 'always') out.push(h);
      else {
        const prefix = m.prefix!;
        out.push((req: Request<any>, res: Response, next) => (pathInPrefix(req.path, prefix) ? h(req, res, next) : next()));
      }
    }
  }
  return out;
}

function notFoundError(req: Request<any>): never {
  throw new HttpError(404, `Cannot ${req.method} ${req.path}`);
}

/** 308 (method-preserving) to the same URL with its trailing slash added or removed. */
function redirectToggleSlash(res: UwsResponse, req: UwsRequest): void {
  const url = req.getUrl();
  const target = url.endsWith('/') ? url.slice(0, -1) : `${url}/`;
  const q = req.getQuery();
  res.writeStatus('308 Permanent Redirect').writeHeader('location', q ? `${target}?${q}` : target).end();
}
