// The hooks the app itself takes (docs/hooks.md): the HTTP hooks every scope takes, the
// WebSocket hooks, and the app's own lifecycle: onRoute (each route, for OpenAPI generators
// and the like), onReady (started), onBeforeListen (may refuse the address), onListen
// (listening), onClose (closed, in reverse order).
import type { HttpHooks } from '../http/hooks.ts';
import type { RouteOptions } from '../http/types.ts';
import type { RouteInfo } from '../routing/route-info.ts';
import type { WsBehavior } from '../realtime/behavior.ts';
import { emptyWsHooks, type WsHookLists, type WsHooks } from '../realtime/ws-hooks.ts';
import type { PublishHooks } from '../realtime/publish-hooks.ts';
import type { Logger } from '../core/logger.ts';
import { APP_LEVEL_HOOK_NAMES, APP_LIFECYCLE_HOOKS } from '../core/hook-names.ts';

/** What onRoute gets beside the route's description: its options as declared. */
export type RouteDeclaration = RouteOptions | WsBehavior<any, any> | undefined;

export interface AppLifecycleHooks {
  /**
   * Every route as it is declared, with its full path (a router's routes when it is attached;
   * added late, it first hears the routes declared before it): the description `app.routes()`
   * returns (HTTP and WebSocket routes, mounts, static directories) and the route's options
   * (RouteOptions for HTTP routes, the behavior for WebSocket routes, undefined otherwise).
   * A throw fails the declaration; a rejected promise fails the start. Scopes take it too
   * (their routes and those below).
   */
  onRoute: (route: RouteInfo, options: RouteDeclaration) => unknown;
  /** Once the app started (routes compiled), before it serves. Awaited; a throw fails the start. */
  onReady: () => unknown;
  /**
   * Before the listen socket opens, with the address asked for (`port` 0: a free one is picked
   * after): a plugin that must not serve there refuses it (the dashboard without auth beyond
   * loopback). Awaited; a throw rejects listen() with that error and nothing binds (in a
   * cluster() worker: the cluster's host and port, and the cluster fails to start).
   */
  onBeforeListen: (address: { readonly host: string; readonly port: number }) => unknown;
  /** Once listening. Awaited before listen() resolves; a throw is logged. */
  onListen: (address: { readonly host: string; readonly port: number }) => unknown;
  /** When the server closed (after in-flight requests): in reverse order, awaited within the shutdown timeout; a throw is logged. */
  onClose: () => unknown;
}

/** Every hook `app.addHook` takes. */
export interface AppHooks extends HttpHooks, WsHooks, PublishHooks, AppLifecycleHooks {}

/** The app-only lifecycle hooks (onRoute is a scope hook: scopes take it too). */
export const APP_HOOK_NAMES: ReadonlySet<string> = new Set<keyof AppLifecycleHooks>(APP_LIFECYCLE_HOOKS);

/** The app-level hooks, by name. */
export interface AppHookLists extends WsHookLists {
  onReady: AppLifecycleHooks['onReady'][];
  onBeforeListen: AppLifecycleHooks['onBeforeListen'][];
  onListen: AppLifecycleHooks['onListen'][];
  onPublish: PublishHooks['onPublish'][];
  onDeliver: PublishHooks['onDeliver'][];
}

/** No app-level hooks yet (the App's starting lists). */
export function emptyAppHooks(): AppHookLists {
  return { ...emptyWsHooks(), onReady: [], onBeforeListen: [], onListen: [], onPublish: [], onDeliver: [] };
}

export function isAppLevelHook(name: string): boolean {
  return APP_LEVEL_HOOK_NAMES.has(name);
}

/** onBeforeListen hooks in order, each awaited: the first throw rejects (listen() does not bind). */
export async function runBeforeListen(hooks: AppHookLists, host: string, port: number): Promise<void> {
  for (const hook of hooks.onBeforeListen) await hook({ host, port });
}

/** onListen hooks in order, each awaited; a throw is logged, the server keeps listening. */
export async function runOnListen(hooks: AppHookLists, host: string, port: number, logger: Logger): Promise<void> {
  for (const hook of hooks.onListen) {
    try {
      await hook({ host, port });
    } catch (err) {
      logger.error({ err }, 'onListen hook failed');
    }
  }
}
