// Plugins and their scopes (docs/plugins.md), after Fastify's encapsulation: `register(plugin,
// { prefix })` runs the plugin with a new scope, a router attached under the prefix. Hooks,
// middleware, decorators and error handlers added to a scope apply to its routes and the
// scopes below it, never to its siblings or its parents. A plugin defined with `global: true`
// runs with the registering scope itself instead (it may decorate and hook the app).
import { checkHookFunction, HTTP_HOOK_NAMES, type HttpHooks } from '../http/hooks.ts';
import { checkDecoration, type Decoration } from '../http/decorations.ts';
import type { AppDecorations, ReplyDecorations, RequestDecorations } from '../http/decoration-types.ts';
import { APP_LEVEL_HOOK_NAMES } from '../core/hook-names.ts';
import { Router } from './router.ts';
import { replayRoutes, type RouteListener } from './route-announce.ts';
import type { RouteInfo } from './route-info.ts';

/**
 * onRoute: hears every route of its scope and the scopes below, with its full path, when it is
 * declared (and, when added late, the routes declared before it). `options` are the route's
 * options as declared (RouteOptions for HTTP routes; the WebSocket behavior; undefined for
 * mounts and static directories). A throw fails the declaration; a rejection fails the start.
 */
export type OnRouteHook = (route: RouteInfo, options: any) => unknown;

/** The hooks a scope takes: the HTTP hooks and onRoute. */
export interface ScopeHooks extends HttpHooks {
  onRoute: OnRouteHook;
}

/** What `definePlugin` records about a plugin. */
export interface PluginMeta {
  /** Names the plugin: registering it twice is an error, and others can depend on it. */
  readonly name?: string;
  /** Names of plugins that must be registered (anywhere in the app) before it starts. */
  readonly dependencies?: readonly string[];
  /** Run with the registering scope itself rather than a new one: its hooks and decorations reach everything there. */
  readonly global?: boolean;
}

/** A plugin: a function given a scope and the options it was registered with. May be async. */
export type Plugin<O = {}, S = Scope> = (scope: S, options: O) => void | Promise<void>;

/** Options every registration takes, beside the plugin's own. */
export interface RegisterOptions {
  /** Path prefix for the plugin's routes (a literal path, e.g. `/admin`). */
  prefix?: string;
}

const pluginMeta = new WeakMap<Function, PluginMeta>();

/** Names a plugin, declares what it depends on, or opts it out of encapsulation (`global: true`). */
export function definePlugin<F extends Plugin<any, any>>(meta: PluginMeta, plugin: F): F {
  if (typeof meta !== 'object' || meta === null)
    throw new TypeError('definePlugin(meta, fn): meta must be an object like { name: "my-plugin" }');
  if (typeof plugin !== 'function') throw new TypeError('definePlugin(meta, fn): fn must be a function (scope, options) => void');
  for (const key of Object.keys(meta))
    if (key !== 'name' && key !== 'dependencies' && key !== 'global')
      throw new TypeError(`definePlugin(): unknown meta "${key}" (name, dependencies, global)`);
  if (meta.name !== undefined && (typeof meta.name !== 'string' || meta.name === ''))
    throw new TypeError('definePlugin(): name must be a non-empty string');
  if (
    meta.dependencies !== undefined &&
    !(Array.isArray(meta.dependencies) && meta.dependencies.every((d) => typeof d === 'string' && d !== ''))
  ) {
    throw new TypeError('definePlugin(): dependencies must be a list of plugin names');
  }
  if (meta.global !== undefined && typeof meta.global !== 'boolean') throw new TypeError('definePlugin(): global must be a boolean');
  if (pluginMeta.has(plugin)) throw new TypeError('definePlugin(): this function is already a defined plugin');
  pluginMeta.set(plugin, Object.freeze({ ...meta, dependencies: meta.dependencies && Object.freeze([...meta.dependencies]) }));
  return plugin;
}

/** What every scope of one app shares. @internal */
export interface PluginRegistry {
  /** Names of the plugins registered so far. */
  readonly names: Set<string>;
  /** Plugins with dependencies, checked when the app starts. */
  readonly needs: { name: string; dependencies: readonly string[] }[];
  /** Registrations still running (async plugins) and async onRoute hooks: the app waits for them before it starts. */
  readonly pending: Promise<unknown>[];
  /** Handlers of routes the app made itself (a mount's or static directory's catch-all): onRoute does not hear them. */
  readonly unlisted: WeakSet<object>;
}

/**
 * A router with plugins, hooks and decorators. The App is the root scope; `register` makes
 * the others. `H` lists the hooks `addHook` takes (the App adds WebSocket and app hooks).
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the merge is how decorate() values are typed (no runtime members are declared here)
export class Scope<H extends object = ScopeHooks> extends Router {
  /** @internal */ readonly _registry: PluginRegistry;
  /** Values given to decorate() here and above (children copy them). @internal */
  readonly _decorations: Map<string, unknown>;
  /** The scope this one was registered in (undefined for the app). @internal */
  readonly _parent: Scope<any> | undefined;

  /** @internal */
  constructor(parent?: Scope<any>) {
    super();
    this._registry = parent?._registry ?? { names: new Set(), needs: [], pending: [], unlisted: new WeakSet() };
    this._decorations = new Map(parent?._decorations);
    this._parent = parent;
    for (const [name, value] of this._decorations) Object.defineProperty(this, name, { value, enumerable: true });
  }

  /** Request or reply decorations declared here and in the scopes above (routes here get them all). */
  private _declared(kind: 'request' | 'reply'): Decoration[] {
    const out: Decoration[] = [];
    for (let s: Scope<any> | undefined = this; s !== undefined; s = s._parent)
      out.push(...(kind === 'request' ? s._requestDecorations : s._replyDecorations));
    return out;
  }

  /**
   * Adds a lifecycle hook for this scope's routes and the scopes below it (docs/hooks.md).
   * Sync or async; a hook that throws or rejects goes to the error path.
   */
  addHook<K extends keyof H & string>(name: K, hook: H[K]): this {
    this._checkOpen(`addHook("${String(name)}")`);
    if (typeof name !== 'string') throw new TypeError('addHook(name, fn): name must be a hook name');
    if (name === 'onRoute') {
      checkHookFunction(name, hook, 'addHook()');
      this._listenRoutes(hook as unknown as OnRouteHook);
      return this;
    }
    if (!HTTP_HOOK_NAMES.has(name)) {
      if (APP_LEVEL_HOOK_NAMES.has(name))
        throw new TypeError(
          `addHook("${name}"): an app-level hook; add it with app.addHook(), or from a plugin defined with { global: true } registered on the app`,
        );
      throw new TypeError(
        `addHook("${name}"): unknown hook (HTTP hooks: ${[...HTTP_HOOK_NAMES].join(', ')}, onRoute; app: ${[...APP_LEVEL_HOOK_NAMES].join(', ')})`,
      );
    }
    checkHookFunction(name, hook, 'addHook()');
    const hooks = this._hooks as Record<string, Function[]>;
    (hooks[name] ??= []).push(hook as Function);
    return this;
  }

  /**
   * Adds an onRoute listener here: it hears the HTTP routes already declared in this scope and
   * below, then each new one as it is declared. The App adds what only it declares (WebSocket
   * routes, mounts, static directories). A promise it returns is awaited before the app starts.
   */
  private _listenRoutes(hook: OnRouteHook): void {
    const { unlisted, pending } = this._registry;
    const listener: RouteListener = (info, options, handler) => {
      if (handler !== undefined && unlisted.has(handler)) return;
      const result = hook(info, options);
      if (result instanceof Promise) {
        result.catch(() => {}); // the start fails with it; no unhandled rejection meanwhile
        pending.push(result);
      }
    };
    replayRoutes(this, listener);
    this._routeListeners.push(listener);
  }

  /**
   * Runs a plugin. It gets a new scope under `options.prefix` (encapsulated), or this scope
   * itself when defined with `global: true`. Await it: an async plugin's routes exist once it
   * resolves (listen() waits for registrations still running).
   */
  register<O extends object = {}>(plugin: Plugin<O, Scope<H>>, options?: O & RegisterOptions): Promise<void> {
    this._checkOpen('register()');
    if (typeof plugin !== 'function')
      throw new TypeError(`register() needs a plugin function (scope, options) => void, got ${plugin === null ? 'null' : typeof plugin}`);
    if (options !== undefined && (typeof options !== 'object' || options === null))
      throw new TypeError('register(plugin, options): options must be an object');
    const meta = pluginMeta.get(plugin) ?? {};
    const { prefix, ...own } = (options ?? {}) as O & RegisterOptions;
    const registry = this._registry;
    const label = meta.name !== undefined ? `plugin "${meta.name}"` : `plugin ${plugin.name || '(anonymous)'}`;
    if (meta.name !== undefined) {
      if (registry.names.has(meta.name))
        throw new Error(
          `${label} is registered twice: register it once (on the app, or with { global: true }), or give the two a different name`,
        );
    }
    let scope: Scope<H>;
    if (meta.global === true) {
      if (prefix !== undefined)
        throw new TypeError(`${label} is global: it takes no prefix (its routes are declared where it is registered)`);
      scope = this;
    } else {
      scope = new Scope<H>(this);
      this.attach(prefix ?? '/', scope);
    }
    if (meta.name !== undefined) {
      registry.names.add(meta.name);
      if (meta.dependencies?.length) registry.needs.push({ name: meta.name, dependencies: meta.dependencies });
    }
    let done: Promise<void>;
    try {
      done = Promise.resolve(plugin(scope, own as O)).then(
        () => undefined,
        (err) => {
          throw withPlugin(err, label);
        },
      );
    } catch (err) {
      done = Promise.reject(withPlugin(err, label));
    }
    // The start waits for it and fails with its error; a caller who did not await it gets no
    // unhandled rejection (which would end the process) meanwhile.
    done.catch(() => {});
    registry.pending.push(done);
    return done;
  }

  /** Adds a value to this scope and the scopes registered below it afterwards: `scope.db`. */
  decorate<K extends keyof AppDecorations & string>(name: K, value: AppDecorations[K]): this {
    this._checkOpen('decorate()');
    if (typeof name !== 'string' || name === '') throw new TypeError('decorate() needs a name (a non-empty string)');
    if ((name as string).startsWith('_') || name in this)
      throw new TypeError(`decorate("${name}"): clashes with an existing member of the app or scope`);
    this._decorations.set(name, value);
    Object.defineProperty(this, name, { value, enumerable: true });
    return this;
  }

  /**
   * Declares a field (an initial primitive or null) or a method (a function) on every request
   * of this scope's routes: the field exists from the request's birth, so every request keeps
   * one shape. Type it by augmenting RequestDecorations.
   */
  decorateRequest<K extends keyof RequestDecorations & string>(name: K, value: RequestDecorations[K]): this {
    this._checkOpen('decorateRequest()');
    checkDecoration('request', name, value, this._declared('request'));
    this._requestDecorations.push(decoration(name, value));
    return this;
  }

  /** As decorateRequest, on every response (reply). Type it by augmenting ReplyDecorations. */
  decorateReply<K extends keyof ReplyDecorations & string>(name: K, value: ReplyDecorations[K]): this {
    this._checkOpen('decorateReply()');
    checkDecoration('reply', name, value, this._declared('reply'));
    this._replyDecorations.push(decoration(name, value));
    return this;
  }
}

// Values given to decorate() are readable on the scope: `scope.db`.
// biome-ignore lint/correctness/noUnusedVariables: a merged declaration repeats the class's type parameters
export interface Scope<H extends object = ScopeHooks> extends AppDecorations {}

function decoration(name: string, value: unknown): Decoration {
  return Object.freeze({ name, value });
}

/** Names the plugin in an error from its registration (the original is the cause). */
function withPlugin(err: unknown, label: string): unknown {
  if (err instanceof Error && !err.message.includes(label)) err.message = `${label}: ${err.message}`;
  return err;
}

/** Throws when a registered plugin's dependency was never registered (at start). @internal */
export function checkDependencies(registry: PluginRegistry): void {
  for (const { name, dependencies } of registry.needs) {
    for (const dep of dependencies) {
      if (!registry.names.has(dep))
        throw new Error(
          `plugin "${name}" depends on plugin "${dep}", which is not registered: register "${dep}" (app.register) before the app starts`,
        );
    }
  }
}
