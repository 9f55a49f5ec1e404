// adapter({ out, precompress, envPrefix, websocket }): checked once, when svelte.config.js /
// vite.config.js is loaded, so a typo fails the build with the option's name instead of
// surfacing at the first request in production.
import { checkKnownKeys } from '@tachyon/server/options-check';

export interface WebSocketOptions {
  /** URL path of the WebSocket route. Default `/ws`. */
  path?: string;
  /** The hooks file, relative to the project root, without or with extension. Default `src/hooks.ws`. */
  hooks?: string;
}

export interface AdapterOptions {
  /** Output directory. Default `build`. */
  out?: string;
  /** Brotli and gzip variants of assets and prerendered pages, made at build time. Default true. */
  precompress?: boolean;
  /** Prefix of the environment variables the server reads (`MY_PORT` with `envPrefix: 'MY_'`). Default ''. */
  envPrefix?: string;
  /** The realtime endpoint served from `src/hooks.ws.ts`; `false` turns it off. */
  websocket?: WebSocketOptions | false;
  /**
   * SvelteKit gets Tachyon's light web `Request` and `Response` (docs/serving.md): undici's
   * objects made only when something beyond method, URL, headers, status and whole bodies is
   * used. `false`: undici's own for every request, and the global `Response` left alone.
   * Default true.
   */
  lightWeb?: boolean;
}

export interface ResolvedAdapterOptions {
  out: string;
  precompress: boolean;
  envPrefix: string;
  websocket: { path: string; hooks: string } | false;
  lightWeb: boolean;
}

const KNOWN = new Set(['out', 'precompress', 'envPrefix', 'websocket', 'lightWeb']);
const KNOWN_WS = new Set(['path', 'hooks']);
const ENV_PREFIX = /^[A-Za-z_][A-Za-z0-9_]*$/;
const WS_PATH = /^\/[A-Za-z0-9._~\-/]*$/;

function fail(message: string): never {
  throw new TypeError(`@tachyon/sveltekit: ${message}`);
}

export function resolveAdapterOptions(options: AdapterOptions | undefined): ResolvedAdapterOptions {
  const o = options === undefined ? {} : options;
  if (typeof o !== 'object' || o === null || Array.isArray(o)) fail('adapter() options must be an object');
  checkKnownKeys('@tachyon/sveltekit: adapter()', o, KNOWN);
  const out = o.out ?? 'build';
  if (typeof out !== 'string' || out.trim() === '') fail('out must be a non-empty directory path');
  const precompress = o.precompress ?? true;
  if (typeof precompress !== 'boolean') fail('precompress must be a boolean');
  const lightWeb = o.lightWeb ?? true;
  if (typeof lightWeb !== 'boolean') fail('lightWeb must be a boolean');
  const envPrefix = o.envPrefix ?? '';
  if (typeof envPrefix !== 'string' || (envPrefix !== '' && !ENV_PREFIX.test(envPrefix)))
    fail(`envPrefix must be letters, digits and underscores (got ${JSON.stringify(envPrefix)})`);
  let websocket: ResolvedAdapterOptions['websocket'] = { path: '/ws', hooks: 'src/hooks.ws' };
  if (o.websocket === false) websocket = false;
  else if (o.websocket !== undefined) {
    const w = o.websocket;
    if (typeof w !== 'object' || w === null || Array.isArray(w)) fail('websocket must be an object ({ path, hooks }) or false');
    checkKnownKeys('@tachyon/sveltekit: adapter() websocket', w, KNOWN_WS);
    const path = w.path ?? '/ws';
    if (typeof path !== 'string' || !WS_PATH.test(path) || path.includes('//') || (path.length > 1 && path.endsWith('/')))
      fail(`websocket.path must be an absolute URL path like "/ws" (got ${JSON.stringify(path)})`);
    const hooks = w.hooks ?? 'src/hooks.ws';
    if (typeof hooks !== 'string' || hooks.trim() === '') fail('websocket.hooks must be a file path relative to the project root');
    websocket = { path, hooks };
  }
  return { out, precompress, envPrefix, websocket, lightWeb };
}
