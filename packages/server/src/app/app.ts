// The App: the facade users build on. Declaring routes, WebSocket routes, static files and
// mounts only records them; `listen()` compiles everything once (compile.ts) and starts a
// server (server.ts). Options are checked in options.ts.
import { DedupTable } from '../http/dedup.ts';
import { fetchRoute, type FetchHandler } from '../serving/mount.ts';
import { createStatic, type StaticOptions } from '../serving/static/index.ts';
import { resolveStaticOptions } from '../serving/static/options.ts';
import { clientLazyPaths, clientStaticOptions, resolveClientBundle, type ClientOptions } from '../serving/client-bundle.ts';
import type { CompressionOptions } from '../http/compression.ts';
import { WsHub, type PublishOptions } from '../realtime/hub.ts';
import { topicStats, type TopicStats } from '../realtime/topic-stats.ts';
import type { Socket } from '../realtime/socket.ts';
import type { SocketRequestOptions } from '../realtime/requests.ts';
import type { RequestAllResult } from '../realtime/request-all.ts';
import type { ResolvedTopicOptions, TopicOptions } from '../realtime/topics/index.ts';
import type { PublishArgs, TopicsOf, WithTopicOptions, WithWsRoute } from '../realtime/contract.ts';
import type { PresenceMember } from '../realtime/presence/index.ts';
import { checkWsBehavior, type WsBehavior, type WsRouteSpec } from '../realtime/behavior.ts';
import { childLogger, type Logger } from '../core/logger.ts';
import { parsePattern } from '../core/path.ts';
import { Scope, checkDependencies } from '../routing/scope.ts';
import { allMiddleware, freezeRouters, flattenRoutes } from '../routing/route-table.ts';
import { describeHttpRoute, type MountInfo, type RouteInfo, type StaticInfo, type WsRouteInfo } from '../routing/route-info.ts';
import { checkHookFunction } from '../http/hooks.ts';
import { requestIdHook } from '../http/observe/request-id-hook.ts';
import { accessLogHook } from '../http/observe/access-log.ts';
import { emptyAppHooks, isAppLevelHook, type AppHookLists, type AppHooks } from './hooks.ts';
import type { Request } from '../http/io/request.ts';
import type { Response } from '../http/io/response.ts';
import type { Settings } from '../core/settings.ts';
import { InflightTracker } from '../http/tracker.ts';
import type { NotFoundHandler } from '../http/types.ts';
import type { Schema } from '../http/validation.ts';
import { resolveAppOptions, type AppOptions, type ListenOptions, type ResolvedOptions } from './options.ts';
import { compileApp, notFoundError } from './compile.ts';
import type { Running, Server } from './server.ts';
import type { UwsApp } from '../uws/index.ts';
import { dropConnections } from './abort.ts';
import { Lifecycle } from './lifecycle.ts';
import { WsStats } from '../realtime/stats.ts';
import { middlewareSetup, type MiddlewareSetupApi } from '../core/middleware-setup.ts';
import { Rpc } from '../core/rpc.ts';
import { clusterView, type ClusterCounts, type ClusterPlace } from './cluster-view.ts';
import { claimClusterMember, type ClusterMember } from './cluster-member.ts';
import { requestAllWorkers, serveRequestAll } from './request-all-workers.ts';
import { refuseFallbackInCluster } from '../realtime/fallback/route.ts';

export type { AppOptions, ListenOptions } from './options.ts';
export type { AppHooks, AppLifecycleHooks, RouteDeclaration } from './hooks.ts';
export type { ClusterCounts } from './cluster-view.ts';
export type { ClusterMember } from './cluster-member.ts';
export type { CloseOptions, Server } from './server.ts';

/** Cluster-wide counts, beside the app's local `subscribers()` and `connections`. */
export interface MountOptions {
  /** Share responses between concurrent identical anonymous GET/HEAD requests. */
  dedup?: boolean;
  /** Compress the handler's responses (overrides the app's `compression`). */
  compress?: boolean | CompressionOptions;
  /** Remove the mount prefix from the URL the handler sees. Default false. */
  stripPrefix?: boolean;
  bodyLimit?: number;
  /**
   * Hand the handler a real undici Request (about twice the bridge's cost per request)
   * instead of the light one, for handlers that pass it whole to `new Request(request)` or
   * `fetch(request)`. Default false. See docs/serving.md.
   */
  realRequest?: boolean;
  /**
   * Turn on `lightResponses()` (process-wide) when the mount is made, so the handler's
   * `new Response(string | bytes | null, init)` is written with one `res.end()`. Default
   * true; false leaves the global `Response` as it is. See docs/serving.md.
   */
  lightResponses?: boolean;
}

export class App extends Scope<AppHooks> {
  /** Frozen; replaced once by joinCluster() (its logger), before the app starts. @internal */
  _settings: Settings;
  private readonly config: ResolvedOptions;
  private notFoundHandler: NotFoundHandler | undefined;
  private readonly closeHooks: (() => unknown)[] = [];
  /** App-level hooks (WebSocket and lifecycle); the HTTP ones live on the root scope. */
  private readonly appHooks: AppHookLists = emptyAppHooks();
  private uws: UwsApp | undefined;
  private readonly tracker = new InflightTracker();
  private readonly dedup = new DedupTable();
  private loading: Promise<unknown>[] = [];
  /** Replaced once, by joinCluster(): the cluster's bus is known only then. */
  private hub: WsHub;
  /** app.topic() declarations, in order: joinCluster() declares them again on the cluster's hub. */
  private readonly topicDecls: [pattern: string, options: TopicOptions][] = [];
  private readonly wsRoutes: WsRouteSpec[] = [];
  /** Mounts and static directories as declared, for routes(); their handlers are not listed as routes. */
  private readonly served: (MountInfo | StaticInfo)[] = [];
  /** Starting, listening and closing (lifecycle.ts). */
  private readonly lifecycle: Lifecycle;
  /** The cluster this app joined (joinCluster), if any. */
  private member: ClusterMember | undefined;
  private readonly place: ClusterPlace;
  /** app.cluster.request()/handle(): to this thread only until joinCluster() connects it. */
  private readonly requests = new Rpc();
  /** Counts over every worker of the cluster (this app's own outside one). */
  readonly cluster: ClusterCounts;

  constructor(options: AppOptions = {}) {
    super();
    this.config = resolveAppOptions(options);
    this.lifecycle = new Lifecycle({
      hooks: this.appHooks,
      tls: this.config.tls !== undefined,
      settings: () => this._settings,
      onClose: (hook) => this.onClose(hook),
      start: () => this.start(),
    });
    this._settings = Object.freeze({ ...this.config.settings, state: { draining: false, app: this } });
    // Request ids and access logs are hooks on the app, first in line (docs/logging.md).
    if (this._settings.requestId !== null) this.addHook('onRequest', requestIdHook(this._settings.requestId));
    if (this._settings.accessLog !== null) this.addHook('onResponse', accessLogHook(this._settings.accessLog));
    this.hub = new WsHub(this.config.coalescePublishes, this.config.bus, this._settings.logger);
    this.place = { worker: 0, workers: 0, hub: this.hub };
    this.cluster = clusterView(this.place, this.requests);
    serveRequestAll(this.requests, this.place, this.config.bus);
    // Built by a cluster() factory in a worker (the first App it builds): join now.
    const member = claimClusterMember();
    if (member !== undefined) this.joinCluster(member);
  }

  /** The cluster worker serving with this app (1..workers), or 0 outside a cluster (docs/cluster.md). */
  get worker(): number {
    return this.place.worker;
  }

  /**
   * Makes this app worker `member.worker` of a cluster: the worker's thread bus, its id on
   * every log line, the cluster's history store and requests between workers. Advanced:
   * cluster() makes the first App its factory builds join (withClusterMember), or the App
   * it returns when that one was built outside the factory (docs/cluster.md, "The App's side
   * of a cluster"). Once, before the app starts.
   */
  joinCluster(member: ClusterMember): this {
    if (this.lifecycle.hasStarted) throw new Error('app.joinCluster() must be called before the app starts');
    if (this.member !== undefined) throw new Error('app.joinCluster(): this app already joined a cluster');
    const own = this.config.bus;
    const logger = childLogger(this._settings.logger, { worker: member.worker });
    const hub = new WsHub(this.config.coalescePublishes, member.bus(own), logger);
    // History topics share the primary's memory store, unless there is a bus to other servers,
    // the app's or the primary's relay (then a store those servers share too: redisHistory).
    if (member.history !== undefined && own === undefined) hub.history.useDefault(member.history);
    // Retried requests run once in the whole cluster: a resend may reconnect to another worker.
    hub.sharedKeys = member.keys ?? null;
    // Declared again on the cluster's bus, with its checks: a throw leaves the app as it was.
    for (const [pattern, options] of this.topicDecls) this.declareTopic(hub, pattern, options);
    this.member = member;
    this._settings = Object.freeze({ ...this._settings, logger });
    this.hub = hub;
    Object.assign(this.place, { worker: member.worker, workers: member.workers, hub, drain: member.drain?.bind(member) });
    member.connect(this.requests);
    return this;
  }

  /**
   * Runs a web-standard fetch handler (`(request, ctx) => Response`) for every method under
   * `prefix`: SvelteKit's server.respond, a Hono app's fetch, … See docs/serving.md.
   */
  mount(prefix: string, handler: FetchHandler, options: MountOptions = {}): this {
    if (typeof handler !== 'function') throw new TypeError('mount() needs a fetch handler function');
    const base = prefix === '/' ? '' : prefix.replace(/\/+$/, '');
    if (base !== '' && !base.startsWith('/')) throw new TypeError(`Mount prefix must start with "/": ${prefix}`);
    const route = fetchRoute(handler, {
      stripPrefix: options.stripPrefix ? base : '',
      realRequest: options.realRequest,
      lightResponses: options.lightResponses,
    });
    const routeOptions = { dedup: options.dedup ?? false, compress: options.compress, bodyLimit: options.bodyLimit };
    this.declareServed(Object.freeze({ kind: 'mount' as const, prefix: base || '/', stripPrefix: options.stripPrefix ?? false }));
    this._registry.unlisted.add(route);
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
    return this._settings.state.draining;
  }

  /** False while the bus says it is disconnected (`Bus.ready()` returns false); true otherwise. */
  get busReady(): boolean {
    const bus = this.hub.bus;
    if (typeof bus.ready !== 'function') return true;
    try {
      return bus.ready() === true;
    } catch {
      return false;
    }
  }

  /** Answers requests no route matched. Default: 404 `{ "error": "Not Found" }`. App middleware runs first. */
  notFound(handler: NotFoundHandler): this {
    if (typeof handler !== 'function') throw new TypeError('notFound() needs a function');
    this.notFoundHandler = handler;
    return this;
  }

  /** Runs once when the server closes, after in-flight requests finished (as `addHook('onClose', fn)`). */
  onClose(hook: () => unknown): this {
    checkHookFunction('onClose', hook, 'onClose()');
    this.closeHooks.push(hook);
    return this;
  }

  /**
   * Adds a lifecycle hook (docs/hooks.md): the HTTP hooks (for every route; scopes take them
   * for theirs), the WebSocket hooks, and onRoute, onReady, onBeforeListen, onListen, onClose.
   */
  override addHook<K extends keyof AppHooks & string>(name: K, hook: AppHooks[K]): this {
    if (name === 'onRoute') {
      super.addHook(name, hook);
      // The scope's listener heard the HTTP routes so far; it hears what only the app declares too.
      const listener = this._routeListeners[this._routeListeners.length - 1]!;
      for (const r of this.wsRoutes) listener(wsInfo(r), r.behavior, undefined);
      for (const info of this.served) listener(info, undefined, undefined);
      return this;
    }
    if (typeof name !== 'string' || !isAppLevelHook(name)) return super.addHook(name, hook);
    this._checkOpen(`addHook("${name}")`);
    checkHookFunction(name, hook, 'addHook()');
    if (name === 'onClose') this.closeHooks.push(hook as () => unknown);
    else (this.appHooks[name as keyof AppHookLists] as unknown[]).push(hook);
    return this;
  }

  /**
   * A WebSocket route with Tachyon's protocol (docs/protocol.md): pub/sub topics, typed
   * events with replies, raw messages. See docs/realtime.md.
   */
  ws<Data = undefined, E = {}, Rp = {}, const Path extends string = string>(
    path: Path,
    behavior: WsBehavior<Data, E, Rp, TopicsOf<this>>,
  ): this & WithWsRoute<Path, E, Rp> {
    this._checkOpen('app.ws()');
    const pattern = parsePattern(path);
    checkWsBehavior(path, behavior);
    const spec: WsRouteSpec = { pattern, behavior };
    for (const listener of this._routeListeners) listener(wsInfo(spec), behavior, undefined);
    this.wsRoutes.push(spec);
    return this as this & WithWsRoute<Path, E, Rp>;
  }

  /** A mount or static directory: listed by routes(), heard by onRoute. */
  private declareServed(info: MountInfo | StaticInfo): void {
    for (const listener of this._routeListeners) listener(info, undefined, undefined);
    this.served.push(info);
  }

  /**
   * Declares options for the topics `pattern` matches (`*` stands for any run of characters):
   * `history` keeps what is published for clients that reconnect, `presence` tracks who is
   * subscribed, `events` declares what they carry (typed publishes and clients). Call before
   * listen(). See docs/realtime.md, "Topic options".
   */
  topic<const P extends string, const O extends TopicOptions>(pattern: P, options: O): this & WithTopicOptions<P, O> {
    if (this.lifecycle.hasStarted) throw new Error('app.topic() must be called before listen()');
    this.declareTopic(this.hub, pattern, options);
    this.topicDecls.push([pattern, options]);
    return this as this & WithTopicOptions<P, O>;
  }

  /** The topic patterns declared with `app.topic()`, in order, with their options as checked (AsyncAPI generators read `events`). */
  topics(): readonly ResolvedTopicOptions[] {
    return this.hub.topics.list();
  }

  private declareTopic(hub: WsHub, pattern: string, options: TopicOptions): void {
    const declared = hub.defineTopic(pattern, options);
    if (declared.presence !== null) hub.enablePresence(this.config.presenceHeartbeat);
  }

  /**
   * Who is on a presence topic (one member per id, on every process this one hears from):
   * `{ id, data }` per member. Rejects when `topic` has no presence (see docs/presence.md).
   */
  async presence<Data = unknown>(topic: string): Promise<PresenceMember<Data>[]> {
    const tracker = this.hub.presence;
    if (tracker === null || tracker.options(topic) === null)
      throw new TypeError(`topic ${JSON.stringify(topic)} has no presence: declare it with app.topic(pattern, { presence: true })`);
    return tracker.members(topic) as PresenceMember<Data>[];
  }

  /**
   * Publishes `{"topic","event","data"}` to every subscriber of `topic` (fan-out in C++). Data
   * is serialized once. On a topic declared with `events` the event and data are type-checked.
   */
  publish<T extends string>(topic: T, ...args: PublishArgs<TopicsOf<this>, T, PublishOptions>): boolean;
  publish(topic: string, event: string, data?: unknown, options?: PublishOptions): boolean {
    return this.hub.publish(topic, event, data, options);
  }

  /**
   * Asks every subscriber of `topic` (`ws.request()` to each, the data serialized once), in
   * every worker of a cluster() and on every server of a Redis or NATS bus, and resolves when
   * all have answered or failed: `replies` by socket id (`"<worker>:<ws.id>"`, or
   * `"<server>:<worker>:<ws.id>"` with a broker bus), `missing` with each failure (TIMEOUT,
   * CLOSED, CLIENT_ERROR, NO_HANDLER, ...). A server that does not answer in time is logged.
   */
  requestAll<Reply = unknown>(
    topic: string,
    event: string,
    data?: unknown,
    options?: SocketRequestOptions,
  ): Promise<RequestAllResult<Reply>> {
    return requestAllWorkers<Reply>(this.requests, this.place, this.config.bus, this._settings.logger, topic, event, data, options);
  }

  /** Publishes a raw text or binary message to a topic, without an envelope. */
  publishRaw(topic: string, message: string | ArrayBuffer | Uint8Array, isBinary?: boolean): boolean {
    return this.hub.publishRaw(topic, message, isBinary);
  }

  /** Number of sockets subscribed to `topic` in this app (this worker; `app.cluster.subscribers` for all). */
  subscribers(topic: string): number {
    return this.hub.subscribers(topic);
  }

  /**
   * This app's open sockets (this worker), for tools that look inside a running app (a
   * dashboard, an admin command). A live view: don't close sockets while iterating it, copy it first.
   */
  sockets(): IterableIterator<Socket<any>> {
    return this.hub.openSockets();
  }

  /** Subscribers, presence members and kept history messages of one topic (docs/realtime.md, "Looking inside"). */
  topicStats(topic: string): Promise<TopicStats> {
    if (typeof topic !== 'string' || topic === '')
      return Promise.reject(new TypeError('app.topicStats(topic): topic must be a non-empty string'));
    return topicStats(this.hub, topic, this._settings.logger);
  }

  /** Open WebSocket connections to this app (this worker; `app.cluster.connections` for all). */
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
    resolveStaticOptions(options); // a bad option fails here, at the declaration, not at listen()
    const notFound =
      options.notFound ??
      ((req: Request<any>, res: Response) => (this.notFoundHandler ? this.notFoundHandler(req, res) : notFoundError(req)));
    this.declareServed(Object.freeze({ kind: 'static' as const, prefix: base || '/', dir }));
    this.serveFiles(dir, { ...options, notFound }, base === '' ? ['/*'] : [base, `${base}/*`]);
    return this;
  }

  /**
   * Loads `dir` (listen() waits for it) and answers GET at `paths` with its files, on routes
   * onRoute does not hear. Files carry their own precompressed variants and validators: no
   * dynamic compression, and no dedup (a 304 or 206 for one client must never reach another).
   */
  private serveFiles(dir: string, options: StaticOptions, paths: readonly string[]): void {
    this.loading.push(
      createStatic(dir, options).then((files) => {
        this._registry.unlisted.add(files.handler);
        this.onClose(() => files.close());
        for (const path of paths) this.get(path, { compress: false, dedup: false }, files.handler);
      }),
    );
  }

  /**
   * Serves @tachyon/client's minified browser build (one ES module) at `path`, for pages
   * without a bundler: `import { connect } from '/tachyon/client.js'` (docs/client.md), and
   * beside it the SSE transport that the module imports when a connection falls back.
   * Throws if @tachyon/client is not installed.
   */
  client(path = '/tachyon/client.js', options: ClientOptions = {}): this {
    if (this.uws) throw new Error('app.client() must be called before listen()');
    const bundle = resolveClientBundle();
    const staticOptions = clientStaticOptions(path, options, bundle);
    this.declareServed(Object.freeze({ kind: 'static' as const, prefix: path, dir: bundle.dir }));
    this.serveFiles(bundle.dir, staticOptions, [path]);
    for (const lazy of clientLazyPaths(path)) this.serveFiles(bundle.dir, { ...staticOptions, index: lazy.file }, [lazy.path]);
    return this;
  }

  /**
   * The declared routes as read-only data (fresh frozen objects: changing them changes
   * nothing): HTTP routes (method, full path, schemas, limits), WebSocket routes (path,
   * events and their schemas), mounts and static directories (their prefixes). OpenAPI
   * generators and tooling walk it. Schemas are the objects given to the routes.
   */
  routes(): RouteInfo[] {
    const unlisted = this._registry.unlisted;
    const http = flattenRoutes(this)
      .filter((r) => !unlisted.has(r.record.handlers[0]!))
      .map((r) => describeHttpRoute(r.record, r.pattern, r.middleware.length));
    return [...http, ...this.wsRoutes.map(wsInfo), ...this.served];
  }

  /** Starts listening. Port 0 picks a free port; the default host is 0.0.0.0. */
  listen(port: number | ListenOptions = 0, hostOrOptions?: string | ListenOptions): Promise<Server> {
    return this.lifecycle.listen(port, hostOrOptions, arguments.length);
  }

  /**
   * Starts the app without a listen socket, for an acceptor in another thread (worker
   * threads: uWS hands accepted connections from the acceptor's listen socket to this app).
   * Returns the descriptor to pass to the acceptor's `addChildAppDescriptor`, and the Server
   * whose close() drains like listen()'s (remove the descriptor from the acceptor first).
   * Advanced: cluster() uses it (docs/cluster.md, "The App's side of a cluster").
   */
  startForAcceptor(port: number, host = '0.0.0.0'): Promise<{ descriptor: number; server: Server }> {
    return this.lifecycle.startForAcceptor(port, host);
  }

  /**
   * Answers a request with the app's full lifecycle, without a port to manage: `await
   * app.request('/users/1')` or `app.request(path, { method, headers, body })`, or a web
   * Request. Resolves with a web Response. The request goes through the real uWS stack over
   * an internal loopback port, opened on demand and closed when idle (docs/testing.md).
   */
  request(input: string | URL | globalThis.Request, init?: RequestInit): Promise<globalThis.Response> {
    return this.lifecycle.request(input, init);
  }

  /**
   * Closes the app: the server from listen() (as `server.close()` does), or, when only
   * app.request() started it, its internal port, sockets and bus. Idempotent.
   */
  close(options: { timeout?: number } = {}): Promise<void> {
    return this.lifecycle.close(options);
  }

  /**
   * Listens on a port other threads of this process share with SO_REUSEPORT (cluster workers
   * with `reusePort` on Linux; the port must already be resolved). Advanced: cluster() uses it.
   */
  listenShared(port: number, host: string): Promise<Server> {
    return this.lifecycle.listenShared(port, host);
  }

  /**
   * Drops every connection now, without draining (WebSockets get a 1012 close frame first): a
   * cluster worker that is dying. Its thread can then end; a thread that ends while uWS still
   * holds sockets aborts the process. Each call drops what arrived since the last (abort.ts).
   * Advanced: prefer close(), which drains.
   */
  abort(): void {
    dropConnections(this._settings.state, this.hub, this.uws);
  }

  /** True when the app serves HTTPS (it has a `tls` option). */
  get tls(): boolean {
    return this.config.tls !== undefined;
  }

  /**
   * Runs the setup of every middleware declared with defineMiddleware() (metrics() is one), once
   * each, with the App's public setup API: WebSocket counters, the cluster link.
   */
  private setUpMiddleware(): void {
    const member = this.member;
    const api: MiddlewareSetupApi = {
      app: this,
      websocketCounters: () => (this.hub.stats ??= new WsStats()),
      clusterMetrics: (collect) =>
        member === undefined ? undefined : { worker: member.worker, workers: member.workers, gather: member.linkMetrics(collect) },
    };
    for (const h of allMiddleware(this)) middlewareSetup(h)?.(api);
  }

  /** Waits for static files and plugins, compiles every route once, starts the bus. */
  private async start(): Promise<Running> {
    // Plugins may register more plugins: wait until nothing is left running.
    const pending = this._registry.pending;
    while (this.loading.length > 0 || pending.length > 0) {
      const waiting = [...this.loading, ...pending.splice(0)];
      this.loading = [];
      await Promise.all(waiting);
    }
    checkDependencies(this._registry);
    freezeRouters(this);
    const o = this.config;
    this.setUpMiddleware();
    if (this.member !== undefined && this.member.workers > 1) refuseFallbackInCluster(this.wsRoutes);
    const uws = (this.uws ??= compileApp({
      root: this,
      dispatcher: { settings: this._settings, tracker: this.tracker, tls: o.tls !== undefined, dedup: this.dedup },
      settings: this._settings,
      hub: this.hub,
      wsRoutes: this.wsRoutes,
      trailingSlash: o.trailingSlash,
      compression: o.compression,
      tls: o.tls,
      maxHeaderSize: o.maxHeaderSize,
      notFound: this.notFoundHandler,
      wsHooks: this.appHooks,
    }));
    for (const hook of this.appHooks.onReady) await hook();
    this.hub.useHooks(this.appHooks.onPublish, this.appHooks.onDeliver);
    await this.hub.startBus();
    return {
      settings: this._settings,
      hub: this.hub,
      tracker: this.tracker,
      uws,
      closeHooks: this.closeHooks,
      stopAccepting: () => this.lifecycle.stopAccepting(),
    };
  }
}

/** A WebSocket route's description (routes(), onRoute). */
function wsInfo(r: WsRouteSpec): WsRouteInfo {
  return Object.freeze({
    kind: 'ws' as const,
    path: r.pattern.path,
    events: Object.freeze(
      Object.entries(r.behavior.events ?? {}).map(([name, def]) =>
        Object.freeze({
          name,
          ...(def.schema !== undefined && { schema: def.schema as Schema }),
          ...(def.reply !== undefined && { reply: def.reply as Schema }),
          ...(def.binary !== undefined && { binary: typeof def.binary === 'number' ? def.binary : def.binary.code }),
        }),
      ),
    ),
  });
}
