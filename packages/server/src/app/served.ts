// What the App serves besides its own routes: web-standard mounts (app.mount()), static
// directories (app.static()) and the client bundle (app.client()). Each is declared on routes
// the app makes itself, which onRoute does not hear and routes() does not list as HTTP routes:
// they are listed, and announced, as one mount or static entry instead. A collaborator of the
// App (app.ts keeps the public methods and their docs), apart so that app.ts stays one sitting.
// It sees the App only through ServedHost: no private member of another module is read here.
import { fetchRoute, type FetchHandler } from '../serving/mount.ts';
import { createStatic, type StaticOptions } from '../serving/static/index.ts';
import { resolveStaticOptions } from '../serving/static/options.ts';
import { clientLazyPaths, clientStaticOptions, resolveClientBundle, type ClientOptions } from '../serving/client-bundle.ts';
import type { CompressionOptions } from '../http/compression.ts';
import type { Request } from '../http/io/request.ts';
import type { Response } from '../http/io/response.ts';
import type { Handler, NotFoundHandler, RouteOptions } from '../http/types.ts';
import type { MountInfo, StaticInfo } from '../routing/route-info.ts';
import type { RouteListener } from '../routing/route-announce.ts';
import { notFoundError } from './compile.ts';

/** Options of app.mount() (docs/serving.md). */
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

/** What Served needs of its App, handed over explicitly by the App (its own scope's registry and listeners). @internal */
export interface ServedHost {
  /** Declares a route on the app (its `any()` or `get()`). */
  route(method: 'any' | 'get', path: string, options: RouteOptions, handler: Handler<any>): void;
  /** The app's onClose(): a static directory's files are released with the app. */
  onClose(hook: () => unknown): void;
  /** True once the app compiled its routes (listen()): static() and client() come too late then. */
  started(): boolean;
  /** The app's notFound() handler, read at each miss (it may be set after static()). */
  notFound(): NotFoundHandler | undefined;
  /** Handlers onRoute must not hear (the app's PluginRegistry.unlisted). */
  readonly unlisted: WeakSet<object>;
  /** The app's onRoute listeners, as they are added. */
  readonly listeners: readonly RouteListener[];
}

/** @internal */
export class Served {
  /** Mounts and static directories as declared, for routes(); their handlers are not listed as routes. */
  readonly list: (MountInfo | StaticInfo)[] = [];
  /** Directories still loading: the app's start waits for them (and empties this). */
  readonly loading: Promise<unknown>[] = [];
  private readonly host: ServedHost;

  constructor(host: ServedHost) {
    this.host = host;
  }

  /** app.mount(): the fetch handler on every method under `prefix`. */
  mount(prefix: string, handler: FetchHandler, options: MountOptions): void {
    if (typeof handler !== 'function') throw new TypeError('mount() needs a fetch handler function');
    const base = prefix === '/' ? '' : prefix.replace(/\/+$/, '');
    if (base !== '' && !base.startsWith('/')) throw new TypeError(`Mount prefix must start with "/": ${prefix}`);
    const route = fetchRoute(handler, {
      stripPrefix: options.stripPrefix ? base : '',
      realRequest: options.realRequest,
      lightResponses: options.lightResponses,
    });
    const routeOptions = { dedup: options.dedup ?? false, compress: options.compress, bodyLimit: options.bodyLimit };
    this.announce(Object.freeze({ kind: 'mount' as const, prefix: base || '/', stripPrefix: options.stripPrefix ?? false }));
    this.host.unlisted.add(route);
    if (base !== '') this.host.route('any', base, routeOptions, route);
    this.host.route('any', `${base}/*`, routeOptions, route);
  }

  /** app.static(): the files under `dir` at `urlPrefix`; misses go to the app's not-found handler. */
  static(urlPrefix: string, dir: string, options: StaticOptions): void {
    const base = urlPrefix === '/' ? '' : urlPrefix.replace(/\/+$/, '');
    if (base !== '' && !base.startsWith('/')) throw new TypeError(`Static prefix must start with "/": ${urlPrefix}`);
    if (this.host.started()) throw new Error('app.static() must be called before listen()');
    resolveStaticOptions(options); // a bad option fails here, at the declaration, not at listen()
    const host = this.host;
    const notFound =
      options.notFound ??
      ((req: Request<any>, res: Response) => {
        const handler = host.notFound();
        return handler ? handler(req, res) : notFoundError(req);
      });
    this.announce(Object.freeze({ kind: 'static' as const, prefix: base || '/', dir }));
    this.serveFiles(dir, { ...options, notFound }, base === '' ? ['/*'] : [base, `${base}/*`]);
  }

  /** app.client(): @tachyon/client's browser build at `path`, and the lazy modules beside it. */
  client(path: string, options: ClientOptions): void {
    if (this.host.started()) throw new Error('app.client() must be called before listen()');
    const bundle = resolveClientBundle();
    const staticOptions = clientStaticOptions(path, options, bundle);
    this.announce(Object.freeze({ kind: 'static' as const, prefix: path, dir: bundle.dir }));
    this.serveFiles(bundle.dir, staticOptions, [path]);
    for (const lazy of clientLazyPaths(path)) this.serveFiles(bundle.dir, { ...staticOptions, index: lazy.file }, [lazy.path]);
  }

  /** A mount or static directory: listed by routes(), heard by onRoute. */
  private announce(info: MountInfo | StaticInfo): void {
    for (const listener of this.host.listeners) listener(info, undefined, undefined);
    this.list.push(info);
  }

  /**
   * Loads `dir` (listen() waits for it) and answers GET at `paths` with its files, on routes
   * onRoute does not hear. Files carry their own precompressed variants and validators: no
   * dynamic compression, and no dedup (a 304 or 206 for one client must never reach another).
   */
  private serveFiles(dir: string, options: StaticOptions, paths: readonly string[]): void {
    this.loading.push(
      createStatic(dir, options).then((files) => {
        this.host.unlisted.add(files.handler);
        this.host.onClose(() => files.close());
        for (const path of paths) this.host.route('get', path, { compress: false, dedup: false }, files.handler);
      }),
    );
  }
}
