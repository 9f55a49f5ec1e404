// The options of `createStatic`, checked once and turned into a config with every
// default filled in.
import type { Request } from '../../http/io/request.ts';
import type { Response } from '../../http/io/response.ts';
import { checkPath, PATH_OK } from './path-guard.ts';
import { checkKnownKeys } from '../../core/options-check.ts';

export interface StaticOptions {
  /** Cache-Control max-age in seconds for files not matched by `immutable`. Default 0. */
  maxAge?: number;
  /** Paths (relative to the directory, starting with `/`) that get `public, max-age=31536000, immutable`. A string is a prefix. */
  immutable?: RegExp | string;
  /** File served for a directory (`/dir/` and `/dir`). Default `'index.html'`; false disables. */
  index?: string | false;
  /** SPA fallback file, relative to the directory: served with 200 for unmatched GET/HEAD requests that accept text/html. */
  fallback?: string;
  /** Files or directories whose name starts with a dot: 'ignore' (404, default), 'deny' (403) or 'allow'. */
  dotfiles?: 'ignore' | 'allow' | 'deny';
  /** Files larger than this many bytes are streamed from disk instead of kept in memory. Default 1 MiB. */
  memoryThreshold?: number;
  /** Keep brotli and gzip variants of compressible files (only when smaller). Default true. */
  precompress?: boolean;
  /**
   * The variants were made at build time: `<file>.br` and `<file>.gz` beside a file are its
   * variants (not served as files of their own) and nothing is compressed at load. Default false.
   */
  precompressed?: boolean;
  /**
   * Content types by file extension (`'.css'` or `'css'` → `'text/css'`), consulted before the
   * built-in table: a build tool's own record (SvelteKit's manifest) wins. Empty values are ignored.
   */
  types?: Record<string, string>;
  /** Development: pick up changed, added and removed files. Default false. */
  watch?: boolean;
  /** Send ETag and answer If-None-Match. Default true. */
  etag?: boolean;
  /** Send Last-Modified and answer If-Modified-Since. Default true. */
  lastModified?: boolean;
  /** Answers requests for files that do not exist. `app.static` passes the app's not-found handler. Default: throws a 404 HttpError. */
  notFound?: (req: Request<any>, res: Response) => unknown;
}

/** StaticOptions, checked, with defaults. */
export interface StaticConfig {
  maxAge: number;
  immutable: RegExp | string | undefined;
  index: string | false;
  fallback: string | undefined;
  dotfiles: 'ignore' | 'allow' | 'deny';
  /** memoryThreshold */
  threshold: number;
  precompress: boolean;
  precompressed: boolean;
  /** Extension (lower-case, no dot) → content type, from the `types` option. */
  types: ReadonlyMap<string, string>;
  watch: boolean;
  etag: boolean;
  lastModified: boolean;
}

const DEFAULT_MEMORY_THRESHOLD = 1 << 20;
const KNOWN = Object.keys({
  maxAge: true,
  immutable: true,
  index: true,
  fallback: true,
  dotfiles: true,
  memoryThreshold: true,
  precompress: true,
  precompressed: true,
  types: true,
  watch: true,
  etag: true,
  lastModified: true,
  notFound: true,
} satisfies Record<keyof StaticOptions, true>);

export function resolveStaticOptions(o: StaticOptions): StaticConfig {
  if (typeof o !== 'object' || o === null) throw new TypeError('Static options must be an object');
  checkKnownKeys('static', o, KNOWN);
  const maxAge = o.maxAge ?? 0;
  if (!(Number.isFinite(maxAge) && maxAge >= 0)) throw new TypeError('maxAge must be a non-negative number of seconds');
  if (o.immutable !== undefined && typeof o.immutable !== 'string' && !(o.immutable instanceof RegExp))
    throw new TypeError('immutable must be a RegExp or a path prefix');
  const index = o.index ?? 'index.html';
  if (index !== false && (typeof index !== 'string' || index === '' || /[/\\\0]/.test(index)))
    throw new TypeError('index must be a file name or false');
  const dotfiles = o.dotfiles ?? 'ignore';
  if (!['ignore', 'allow', 'deny'].includes(dotfiles)) throw new TypeError("dotfiles must be 'ignore', 'allow' or 'deny'");
  const threshold = o.memoryThreshold ?? DEFAULT_MEMORY_THRESHOLD;
  if (!(Number.isFinite(threshold) && threshold >= 0)) throw new TypeError('memoryThreshold must be a non-negative number of bytes');
  if (o.precompressed !== undefined && typeof o.precompressed !== 'boolean') throw new TypeError('precompressed must be a boolean');
  if (o.notFound !== undefined && typeof o.notFound !== 'function') throw new TypeError('notFound must be a function');
  let fallback: string | undefined;
  if (o.fallback !== undefined) {
    if (typeof o.fallback !== 'string') throw new TypeError('fallback must be a path relative to the directory');
    fallback = o.fallback.replace(/^(\.?\/)+/, '');
    if (fallback === '' || checkPath(fallback, '') !== PATH_OK || fallback.endsWith('/'))
      throw new TypeError(`Invalid fallback path: ${JSON.stringify(o.fallback)}`);
  }
  const types = resolveTypes(o.types);
  let immutable = o.immutable;
  if (typeof immutable === 'string' && !immutable.startsWith('/')) immutable = '/' + immutable;
  return {
    maxAge: Math.floor(maxAge),
    immutable,
    index,
    fallback,
    dotfiles,
    threshold,
    precompress: o.precompress ?? true,
    precompressed: o.precompressed ?? false,
    types,
    watch: o.watch ?? false,
    etag: o.etag ?? true,
    lastModified: o.lastModified ?? true,
  };
}

/** A media type as Content-Type carries it: `type/subtype`, optionally with parameters. */
const MEDIA_TYPE = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(\s*;\s*[\w!#$&^.+-]+=("[^"\r\n]*"|[\w!#$&^.+-]+))*$/;

function resolveTypes(types: Record<string, string> | undefined): ReadonlyMap<string, string> {
  const map = new Map<string, string>();
  if (types === undefined) return map;
  if (typeof types !== 'object' || types === null) throw new TypeError('types must be an object of extension → content type');
  for (const [ext, type] of Object.entries(types)) {
    if (type === '') continue; // SvelteKit records '' for extensions it has no type for
    const key = ext.replace(/^\./, '').toLowerCase();
    if (key === '' || /[./\\\s]/.test(key)) throw new TypeError(`types: invalid extension ${JSON.stringify(ext)}`);
    if (typeof type !== 'string' || !MEDIA_TYPE.test(type))
      throw new TypeError(`types: invalid content type ${JSON.stringify(type)} for ${JSON.stringify(ext)}`);
    map.set(key, type);
  }
  return map;
}
