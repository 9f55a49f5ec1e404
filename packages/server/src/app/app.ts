// The App: the facade users build on. Declaring routes, WebSocket routes, static files and
// mounts only records them; `listen()` starts it once (start.ts: compile.ts compiles every
// route) and starts a server (server.ts). Options are checked in options.ts. Mounts, static
// directories and the client bundle are served.ts's; the realtime methods call app-realtime.ts.
import { DedupTable } from '../http/dedup.ts';
import type { FetchHandler } from '../serving/mount.ts';
import type { StaticOptions } from '../serving/static/index.ts';
import type { ClientOptions } from '../serving/client-bundle.ts';
import { WsHub, type PublishOptions } from '../realtime/hub.ts';
import type { TopicStats } from '../realtime/topic-stats.ts';
import type { Socket } from '../realtime/socket.ts';
import type { SocketRequestOptions } from '../realtime/requests.ts';
import type { RequestAllResult } from '../realtime/request-all.ts';
import type { ResolvedTopicOptions, TopicOptions } from '../realtime/topics/index.ts';
import type { PublishArgs, TopicsOf, WithTopicOptions, WithWsRoute } from '../realtime/contract.ts';
import type { PresenceMember } from '../realtime/presence/index.ts';
import { checkWsBehavior, type WsBehavior, type WsRouteSpec } from '../realtime/behavior.ts';
import { childLogger, type Logger } from '../core/logger.ts';
import { parsePattern } from '../core/path.ts';
import { Scope } from '../routing/scope.ts';
import { flattenRoutes } from '../routing/route-table.ts';
import { describeHttpRoute, type RouteInfo } from '../routing/route-info.ts';
import { checkHookFunction } from '../http/hooks.ts';
import { requestIdHook } from '../http/observe/request-id-hook.ts';
import { accessLogHook } from '../http/observe/access-log.ts';
import { emptyAppHooks, isAppLevelHook, type AppHookLists, type AppHooks } from './hooks.ts';
import type { Settings } from '../core/settings.ts';
import { InflightTracker } from '../http/tracker.ts';
import type { NotFoundHandler } from '../http/types.ts';
import { resolveAppOptions, type AppOptions, type ListenOptions, type ResolvedOptions } from './options.ts';
import type { Running, Server } from './server.ts';
import type { UwsApp } from '../uws/index.ts';
import { dropConnections } from './abort.ts';
import { Lifecycle } from './lifecycle.ts';
import { Rpc } from '../core/rpc.ts';
import { clusterView, type ClusterCounts, type ClusterPlace } from './cluster-view.ts';
import { claimClusterMember, type ClusterMember } from './cluster-member.ts';
import { requestAllWorkers, serveRequestAll } from './request-all-workers.ts';
import { Served, type MountOptions } from './served.ts';
import { busReady, checkedTopicStats, clusterHub, declareTopic, presenceMembers, wsInfo } from './app-realtime.ts';
import { startApp } from './start.ts';

export type { AppOptions, ListenOptions } from './options.ts';
export type { AppHooks, AppLifecycleHooks, RouteDeclaration } from './hooks.ts';
export type { ClusterCounts } from './cluster-view.ts';
export type { ClusterMember } from './cluster-member.ts';
export type { CloseOptions, Server } from './server.ts';
export type { MountOptions } from './served.ts';

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
  /** Replaced once, by joinCluster(): the cluster's bus is known only then. */
  private hub: WsHub;
  /** app.topic() declarations, in order: joinCluster() declares them again on the cluster's hub. */
  private readonly topicDecls: [pattern: string, options: TopicOptions][] = [];
  private readonly wsRoutes: WsRouteSpec[] = [];
  /** Mounts, static directories and the client bundle (served.ts). */
  private readonly served: Served;
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
    this.served = new Served({
      route: (method, path, options, handler) =>
        void (method === 'get' ? this.get(path, options, handler) : this.any(path, options, handler)),
      onClose: (hook) => void this.onClose(hook),
      started: () => this.uws !== undefined,
      notFound: () => this.notFoundHandler,
      unlisted: this._registry.unlisted,
      listeners: this._routeListeners,
    });
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
    const logger = childLogger(this._settings.logger, { worker: member.worker });
    // The topics declared so far are declared again on the cluster's bus: a throw leaves the app as it was.
    const hub = clusterHub(member, this.config, this.topicDecls, logger);
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
    this.served.mount(prefix, handler, options);
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
    return busReady(this.hub);
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
      for (const info of this.served.list) listener(info, undefined, undefined);
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

  /**
   * Declares options for the topics `pattern` matches (`*` stands for any run of characters):
   * `history` keeps what is published for clients that reconnect, `presence` tracks who is
   * subscribed, `events` declares what they carry (typed publishes and clients). Call before
   * listen(). See docs/realtime.md, "Topic options".
   */
  topic<const P extends string, const O extends TopicOptions>(pattern: P, options: O): this & WithTopicOptions<P, O> {
    if (this.lifecycle.hasStarted) throw new Error('app.topic() must be called before listen()');
    declareTopic(this.hub, pattern, options, this.config.presenceHeartbeat);
    this.topicDecls.push([pattern, options]);
    return this as this & WithTopicOptions<P, O>;
  }

  /** The topic patterns declared with `app.topic()`, in order, with their options as checked (AsyncAPI generators read `events`). */
  topics(): readonly ResolvedTopicOptions[] {
    return this.hub.topics.list();
  }

  /**
   * Who is on a presence topic (one member per id, on every process this one hears from):
   * `{ id, data }` per member. Rejects when `topic` has no presence (see docs/presence.md).
   */
  async presence<Data = unknown>(topic: string): Promise<PresenceMember<Data>[]> {
    return presenceMembers<Data>(this.hub, topic);
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
    return checkedTopicStats(this.hub, topic, this._settings.logger);
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
    this.served.static(urlPrefix, dir, options);
    return this;
  }

  /**
   * Serves @tachyon/client's minified browser build (one ES module) at `path`, for pages
   * without a bundler: `import { connect } from '/tachyon/client.js'` (docs/client.md), and
   * beside it the SSE transport that the module imports when a connection falls back.
   * Throws if @tachyon/client is not installed.
   */
  client(path = '/tachyon/client.js', options: ClientOptions = {}): this {
    this.served.client(path, options);
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
    return [...http, ...this.wsRoutes.map(wsInfo), ...this.served.list];
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

  /** Compiles and starts everything (start.ts), once, when the lifecycle first asks. */
  private start(): Promise<Running> {
    return startApp({
      app: this,
      registry: this._registry,
      loading: this.served.loading,
      member: this.member,
      config: this.config,
      settings: this._settings,
      hub: this.hub,
      tracker: this.tracker,
      dedup: this.dedup,
      wsRoutes: this.wsRoutes,
      appHooks: this.appHooks,
      closeHooks: this.closeHooks,
      notFound: () => this.notFoundHandler,
      compiled: (uws) => (this.uws = uws),
      stopAccepting: () => this.lifecycle.stopAccepting(),
    });
  }
}
