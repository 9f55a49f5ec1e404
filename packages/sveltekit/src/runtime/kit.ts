// The built SvelteKit app on a Tachyon App: static files and prerendered pages from memory,
// everything else through SvelteKit's `Server.respond` with a web Request made straight
// from uWS (no Node IncomingMessage shim), and `src/hooks.ws.ts` as a WebSocket route.
// build/index.js and build/handler.js (written by the adapter) both call createKit().
import { readdirSync, createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import {
  createStatic,
  HttpError,
  lightResponses,
  sendLightResponse,
  toWebRequest,
  type App,
  type FetchHandler,
  type Request,
  type Response,
  type WebRequestOptions,
} from '@tachyon/server';
import { readEnv, type ServerEnv } from './env.ts';
import { clientAddressOf, originResolver } from './proxy.ts';
import { platformFor } from './platform.ts';
import { installWebSocket, type WsHooksModule } from './websocket.ts';

/** The parts of SvelteKit's generated `Server` class the runtime uses (Kit 2 and 3). */
export interface KitServer {
  init(options: { env: Record<string, string | undefined>; read?: (file: string) => ReadableStream }): Promise<void>;
  respond(request: globalThis.Request, options: { getClientAddress(): string; platform?: unknown }): Promise<globalThis.Response>;
}

/** What the adapter bakes into build/server/tachyon-config.js. */
export interface BuildConfig {
  envPrefix: string;
  /** `paths.base`, '' or '/something'. */
  base: string;
  /** `kit.appDir`, `_app` by default. */
  appDir: string;
  /** `paths.origin` (Kit 3), used when ORIGIN is not set. */
  origin: string | undefined;
  precompress: boolean;
  /** WebSocket route path, or false. */
  wsPath: string | false;
  /** Prerendered pages: [URL path (with base), file relative to build/prerendered]. */
  prerendered: [string, string][];
  /** Content types by extension as SvelteKit's manifest records them (served instead of Tachyon's table). */
  mimeTypes?: Record<string, string> | undefined;
  /** The adapter's `lightWeb` (absent in builds made before it: true). */
  lightWeb?: boolean;
}

export interface Built {
  /** SvelteKit's Server for this build (not yet initialised). */
  server: KitServer;
  config: BuildConfig;
  hooks: WsHooksModule | null;
  /** The build directory (build/). */
  dir: string;
}

export interface Kit {
  /** The environment, read once (adapter-node's variables). */
  readonly env: ServerEnv;
  /**
   * SSR only, as a fetch handler: `app.mount('/', handler)`. Static files and the WebSocket
   * route are not served by it: `install(app)` adds everything.
   */
  readonly handler: FetchHandler;
  /** Registers static files, prerendered pages, the hooks.ws route and SSR on `app`. */
  install(app: App): App;
}

/** File paths that are safe as literal route patterns (no `:`, `*`, spaces or encoded bytes). */
const SAFE_PATH = /^[A-Za-z0-9._~\-@]+(?:\/[A-Za-z0-9._~\-@]+)*$/;

/**
 * Which routes serve build/client: a wildcard for the app directory, an exact route per
 * other file. A directory holding a name unsafe as a route pattern is served by a wildcard.
 */
function planFileRoutes(clientDir: string, appDir: string, precompressed: boolean): { exact: string[]; wildcard: string[] } {
  const exact: string[] = [];
  const wildcard = new Set<string>([appDir]);
  const walk = (abs: string, rel: string, top: string): void => {
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      const name = entry.name;
      if (name.startsWith('.')) continue;
      const path = rel === '' ? name : `${rel}/${name}`;
      const first = top || name;
      if (first === appDir || wildcard.has(first)) continue;
      if (entry.isDirectory()) walk(join(abs, name), path, first);
      else if (precompressed && /\.(br|gz)$/.test(name) && existsSync(join(abs, name.slice(0, -3)))) continue;
      else if (SAFE_PATH.test(path)) exact.push(path);
      else if (top !== '') wildcard.add(top);
      else console.warn(`@tachyon/sveltekit: static file ${JSON.stringify(path)} has a name that cannot be a route; it is not served`);
    }
  };
  walk(clientDir, '', '');
  // A directory that turned into a wildcard no longer needs its exact routes.
  return {
    exact: exact.filter((p) => {
      const slash = p.indexOf('/');
      return slash === -1 || !wildcard.has(p.slice(0, slash));
    }),
    wildcard: [...wildcard].filter((d) => existsSync(join(clientDir, d))),
  };
}

/**
 * SvelteKit answers 500 for an error it does not know, such as the body stream failing: a
 * chunked body that grew past BODY_SIZE_LIMIT then gets what adapter-node answers, 413 (and a
 * client that went away gets nothing, as Tachyon answers no aborted request).
 */
function bodyFailureOr(req: Request<any>, response: globalThis.Response): globalThis.Response {
  const failure = req.bodyError;
  if (failure !== null) {
    void response.body?.cancel();
    throw failure;
  }
  return response;
}

const REAL: WebRequestOptions = Object.freeze({ real: true });

export async function createKit(built: Built, env: ServerEnv = readEnv(built.config.envPrefix, built.config.origin)): Promise<Kit> {
  const c = built.config;
  const server = built.server;
  const clientDir = join(built.dir, 'client' + c.base);
  // The light web Request and Response (docs/serving.md) unless the adapter's `lightWeb: false`.
  // The global Response is replaced before any request (the app's modules read it when they
  // answer). Remote-function calls get a real undici Request either way: a live query
  // rebuilds it as `new Request(event.request, …)`, a path kept on undici's own objects.
  const light = c.lightWeb !== false;
  if (light) lightResponses();
  const remotePrefix = `${c.base}/${c.appDir}/remote/`;
  const requestOptions = (path: string): WebRequestOptions | undefined => (!light || path.startsWith(remotePrefix) ? REAL : undefined);
  await server.init({
    env: process.env as Record<string, string | undefined>,
    read: (file) => Readable.toWeb(createReadStream(join(clientDir, file))) as ReadableStream,
  });

  const originOf = originResolver(env);
  const addressOf = clientAddressOf(env, c.envPrefix);

  const bodyLimit = env.bodySizeLimit === Infinity ? Number.MAX_SAFE_INTEGER : env.bodySizeLimit;

  /** The route every request that is not a file goes to. A Tachyon handler returning a web Response. */
  const ssr = async (req: Request<any>, res: Response): Promise<globalThis.Response | undefined> => {
    // A declared length over the limit is refused before SvelteKit runs (adapter-node answers
    // 413 too). A chunked body that grows past it errors its stream while SvelteKit reads it.
    const length = req.header('content-length');
    if (length !== undefined && Number(length) > bodyLimit)
      throw new HttpError(413, `Request body exceeds the limit of ${bodyLimit} bytes`);
    const request = toWebRequest(req, '', originOf === undefined ? undefined : originOf(req), requestOptions(req.path));
    let response = await server.respond(request, {
      platform: platformFor(req.app as unknown as App),
      getClientAddress: () => addressOf(req),
    });
    if (response.status === 500) response = bodyFailureOr(req, response);
    // A light Response (a string or bytes) leaves in one write; any other goes to the route (streamed).
    return sendLightResponse(response, res) ? undefined : response;
  };

  const handler: FetchHandler = async (request, ctx) => {
    // Mounted by the user: the request was built by app.mount; ORIGIN and the proxy headers still apply.
    const origin = originOf === undefined ? undefined : originOf(ctx.req);
    if (origin !== undefined) {
      const url = new URL(request.url);
      if (url.origin !== origin) request = new globalThis.Request(origin + url.pathname + url.search, request);
    }
    // The light Request (app.mount's) made real, the init copying method, headers, body and signal.
    if (requestOptions(ctx.req.path) === REAL) request = new globalThis.Request(request.url, request);
    const response = await server.respond(request, {
      platform: platformFor(ctx.req.app as unknown as App),
      getClientAddress: () => addressOf(ctx.req),
    });
    return response.status === 500 ? bodyFailureOr(ctx.req, response) : response;
  };

  // Loaded before install() so that listen() need not wait, and so a broken build fails here.
  // Variants come from the build (adapter option `precompress`): nothing is compressed at startup.
  const staticOptions = { precompress: false, precompressed: c.precompress, index: false as const, types: c.mimeTypes ?? {} };
  const client = existsSync(clientDir)
    ? await createStatic(clientDir, { ...staticOptions, immutable: `/${c.appDir}/immutable/`, notFound: ssr })
    : undefined;
  const prerenderedDir = join(built.dir, 'prerendered' + c.base);
  const prerendered =
    c.prerendered.length > 0 && existsSync(prerenderedDir)
      ? await createStatic(prerenderedDir, { ...staticOptions, notFound: ssr })
      : undefined;
  const fileRoutes = client ? planFileRoutes(clientDir, c.appDir, c.precompress) : { exact: [], wildcard: [] };

  const install = (app: App): App => {
    const fileRoute = { compress: false, dedup: false };
    if (client) {
      const files = client.handler;
      // `_app/` belongs to SvelteKit: one wildcard route. Other files get exact routes, so a
      // page that shares a directory name with static/ keeps SSR's dedup and compression.
      for (const dir of fileRoutes.wildcard) {
        const prefix = dir + '/';
        app.get(`${c.base}/${dir}/*`, fileRoute, (req: Request<any>, res: Response) => {
          req.params = { '*': prefix + ((req.params as Record<string, string>)['*'] ?? '') };
          return files(req, res);
        });
      }
      for (const file of fileRoutes.exact) {
        const params = Object.freeze({ '*': file });
        app.get(`${c.base}/${file}`, fileRoute, (req: Request<any>, res: Response) => {
          req.params = params;
          return files(req, res);
        });
      }
    }
    if (prerendered) {
      const files = prerendered.handler;
      for (const [path, file] of c.prerendered) {
        // Paths with route-pattern characters (`:`, `*`) are left to SSR rather than misread as patterns.
        if (!/^\/[A-Za-z0-9._~\-@/%]*$/.test(path)) continue;
        const params = Object.freeze({ '*': file });
        app.get(path, fileRoute, (req: Request<any>, res: Response) => {
          req.params = params;
          return files(req, res);
        });
      }
    }
    if (c.wsPath !== false) installWebSocket(app, c.wsPath, built.hooks);
    // Anonymous GET/HEAD are shared between concurrent identical requests (dedup); responses
    // to requests with cookies or Authorization are never compressed (BREACH).
    app.any(`${c.base}/*`, { dedup: true, compress: { skipCredentialed: true }, bodyLimit }, ssr);
    if (c.base !== '') app.any(c.base, { dedup: true, compress: { skipCredentialed: true }, bodyLimit }, ssr);
    return app;
  };

  return { env, handler, install };
}
