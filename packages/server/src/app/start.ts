// An App's start, which the lifecycle (lifecycle.ts) runs once, whoever asks first: wait for
// static directories and plugins, check plugin dependencies, freeze the routers, set up the
// middleware that asked for it, compile every route (compile.ts), run onReady, start the bus.
// Apart from app.ts so that the facade stays one sitting; the App hands over what the start
// reads explicitly (StartParts), so nothing here reaches into the App's private members.
import type { DedupTable } from '../http/dedup.ts';
import type { InflightTracker } from '../http/tracker.ts';
import type { NotFoundHandler } from '../http/types.ts';
import type { AppView, Settings } from '../core/settings.ts';
import { middlewareSetup, type MiddlewareSetupApi } from '../core/middleware-setup.ts';
import type { Router } from '../routing/router.ts';
import { checkDependencies, type PluginRegistry } from '../routing/scope.ts';
import { allMiddleware, freezeRouters } from '../routing/route-table.ts';
import type { WsHub } from '../realtime/hub.ts';
import type { WsRouteSpec } from '../realtime/behavior.ts';
import { WsStats } from '../realtime/stats.ts';
import { refuseFallbackInCluster } from '../realtime/fallback/route.ts';
import type { UwsApp } from '../uws/index.ts';
import type { AppHookLists } from './hooks.ts';
import type { ResolvedOptions } from './options.ts';
import type { ClusterMember } from './cluster-member.ts';
import type { Running } from './server.ts';
import { compileApp } from './compile.ts';
import { loadSchemaCompiler } from '../http/schema-compile.ts';

/** What the start reads from its App, as it stands when the start begins (joinCluster() cannot come later). @internal */
export interface StartParts {
  /** The App: its routers, and the view middleware setups get. */
  readonly app: Router & AppView;
  readonly registry: PluginRegistry;
  /** Static directories still loading (served.ts): emptied as they are awaited. */
  readonly loading: Promise<unknown>[];
  readonly member: ClusterMember | undefined;
  readonly config: ResolvedOptions;
  readonly settings: Settings;
  readonly hub: WsHub;
  readonly tracker: InflightTracker;
  readonly dedup: DedupTable;
  readonly wsRoutes: readonly WsRouteSpec[];
  readonly appHooks: AppHookLists;
  readonly closeHooks: readonly (() => unknown)[];
  /** The app's notFound() handler, read once plugins have registered (one may set it). */
  notFound(): NotFoundHandler | undefined;
  /** Keeps the compiled uWS app, before onReady runs: static() and client() refuse from then on. */
  compiled(uws: UwsApp): void;
  /** Stops other listen sockets accepting (the lifecycle's). */
  stopAccepting(): void;
}

/** Waits for static files and plugins, compiles every route once, starts the bus. */
export async function startApp(p: StartParts): Promise<Running> {
  // Plugins may register more plugins: wait until nothing is left running.
  const { loading } = p;
  const pending = p.registry.pending;
  while (loading.length > 0 || pending.length > 0) await Promise.all([...loading.splice(0), ...pending.splice(0)]);
  checkDependencies(p.registry);
  freezeRouters(p.app);
  const o = p.config;
  setUpMiddleware(p.app, p.hub, p.member);
  if (p.member !== undefined && p.member.workers > 1) refuseFallbackInCluster(p.wsRoutes);
  if (p.settings.compileSchemas) await loadSchemaCompiler();
  const uws = compileApp({
    root: p.app,
    dispatcher: { settings: p.settings, tracker: p.tracker, tls: o.tls !== undefined, dedup: p.dedup },
    settings: p.settings,
    hub: p.hub,
    wsRoutes: p.wsRoutes,
    trailingSlash: o.trailingSlash,
    compression: o.compression,
    tls: o.tls,
    maxHeaderSize: o.maxHeaderSize,
    notFound: p.notFound(),
    wsHooks: p.appHooks,
  });
  p.compiled(uws);
  for (const hook of p.appHooks.onReady) await hook();
  p.hub.useHooks(p.appHooks.onPublish, p.appHooks.onDeliver);
  await p.hub.startBus();
  return { settings: p.settings, hub: p.hub, tracker: p.tracker, uws, closeHooks: p.closeHooks, stopAccepting: p.stopAccepting };
}

/**
 * Runs the setup of every middleware declared with defineMiddleware() (metrics() is one), once
 * each, with the App's public setup API: WebSocket counters, the cluster link.
 */
function setUpMiddleware(app: Router & AppView, hub: WsHub, member: ClusterMember | undefined): void {
  const api: MiddlewareSetupApi = {
    app,
    websocketCounters: () => (hub.stats ??= new WsStats()),
    clusterMetrics: (collect) =>
      member === undefined ? undefined : { worker: member.worker, workers: member.workers, gather: member.linkMetrics(collect) },
  };
  for (const h of allMiddleware(app)) middlewareSetup(h)?.(api);
}
