// How an App serves once declared: it starts once, for whoever asks first (listen(), an
// acceptor in another thread, listenShared(), app.request()'s loopback port), holds the one
// Server handle, and closes it. The App declares routes and compiles them (its start());
// this decides when that runs and what listens.
import { checkListenArguments, listeningLog, type ListenOptions } from './options.ts';
import { runBeforeListen, runOnListen, type AppHookLists } from './hooks.ts';
import { closeOnSignals, listenOn, makeServer, type CloseOptions, type Running, type Server } from './server.ts';
import { Loopback } from './loopback.ts';
import type { Settings } from '../core/settings.ts';

/** What the lifecycle needs from its App. */
export interface LifecycleHost {
  readonly hooks: AppHookLists;
  readonly tls: boolean;
  /** The App's current settings (joinCluster() replaces them once, before the start). */
  settings(): Settings;
  onClose(hook: () => unknown): void;
  /** Compiles and starts everything; called once. */
  start(): Promise<Running>;
}

export class Lifecycle {
  private readonly host: LifecycleHost;
  private started: Promise<Running> | undefined;
  private server: Server | undefined;
  private loopback: Loopback | undefined;

  constructor(host: LifecycleHost) {
    this.host = host;
  }

  /** True once anything asked the app to start (declarations that must come first check it). */
  get hasStarted(): boolean {
    return this.started !== undefined;
  }

  startOnce(): Promise<Running> {
    return (this.started ??= this.host.start());
  }

  /** app.listen(): `argCount` is the caller's arguments.length (a host given twice is refused). */
  async listen(port: number | ListenOptions, hostOrOptions: string | ListenOptions | undefined, argCount: number): Promise<Server> {
    checkListenArguments(port, hostOrOptions, argCount);
    const extra = typeof hostOrOptions === 'string' ? { host: hostOrOptions } : (hostOrOptions ?? {});
    const opts: ListenOptions = typeof port === 'number' ? { ...extra, port } : { ...extra, ...port };
    const requested = opts.port ?? 0;
    const host = opts.host ?? '0.0.0.0';
    if (!Number.isInteger(requested) || requested < 0 || requested > 65535) throw new TypeError(`Invalid port ${requested}`);
    if (this.server) throw new Error('This app is already listening');
    const run = await this.startOnce();
    await runBeforeListen(this.host.hooks, host, requested);
    const { socket, port: p } = await listenOn(run.uws, host, requested);
    const server = makeServer(run, socket, host, p);
    this.server = server;
    const settings = this.host.settings();
    if (opts.signals) {
      const signals = opts.signals === true ? (['SIGTERM', 'SIGINT'] as NodeJS.Signals[]) : opts.signals;
      this.host.onClose(closeOnSignals(server, signals, opts.shutdownTimeout ?? 10_000, settings));
    }
    settings.logger.info(...listeningLog(host, p, this.host.tls));
    await runOnListen(this.host.hooks, host, p, settings.logger);
    return server;
  }

  /** app.startForAcceptor(): started without a listen socket; the descriptor is for the acceptor. */
  async startForAcceptor(port: number, host: string): Promise<{ descriptor: number; server: Server }> {
    if (this.server) throw new Error('This app is already started');
    const run = await this.startOnce();
    await runBeforeListen(this.host.hooks, host, port);
    const server = makeServer(run, null, host, port);
    this.server = server;
    return { descriptor: run.uws.getDescriptor(), server };
  }

  /** app.listenShared(): a SO_REUSEPORT listen socket. */
  async listenShared(port: number, host: string): Promise<Server> {
    if (this.server) throw new Error('This app is already started');
    const run = await this.startOnce();
    await runBeforeListen(this.host.hooks, host, port);
    const { socket } = await listenOn(run.uws, host, port, true);
    this.server = makeServer(run, socket, host, port);
    return this.server;
  }

  /** app.request(): over the loopback port, opened on demand. */
  request(input: string | URL | globalThis.Request, init?: RequestInit): Promise<globalThis.Response> {
    this.loopback ??= new Loopback(async () => (await this.startOnce()).uws);
    return this.loopback.request(input, init);
  }

  /** The server's close(), or, when only app.request() started the app, a server made to close it. Idempotent. */
  async close(options: CloseOptions = {}): Promise<void> {
    this.loopback?.close();
    if (this.server) return this.server.close(options);
    if (this.started === undefined) return;
    const run = await this.started;
    this.server ??= makeServer(run, null, '127.0.0.1', 0);
    return this.server.close(options);
  }

  /** A shutdown began: the loopback port takes no more requests. */
  stopAccepting(): void {
    this.loopback?.close();
  }
}
