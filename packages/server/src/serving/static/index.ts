// Static files served from memory. Everything that does not depend on the request is
// computed once, when the directory is loaded: bodies, brotli/gzip variants, ETags,
// Last-Modified, Cache-Control and the header lists themselves. A request then costs one
// Map lookup, a few header reads and one `res.end(buffer)`.
//
// Files over `memoryThreshold` are streamed from disk; only paths from the loaded table are
// ever opened, after their real path is checked again.
import { constants as fsc, watch, type FSWatcher } from 'node:fs';
import { open, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { hash } from 'node:crypto';
import { join, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants as zc, gzip } from 'node:zlib';
import { parseAcceptEncoding } from '../compression.ts';
import type { Request } from '../../http/io/request.ts';
import type { Response } from '../../http/io/response.ts';
import type { Next } from '../../http/types.ts';

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
  /** Development: pick up changed, added and removed files. Default false. */
  watch?: boolean;
  /** Send ETag and answer If-None-Match. Default true. */
  etag?: boolean;
  /** Send Last-Modified and answer If-Modified-Since. Default true. */
  lastModified?: boolean;
  /** Answers requests for files that do not exist. `app.static` passes the app's not-found handler. Default: 404 JSON. */
  notFound?: (req: Request<any>, res: Response) => unknown;
}

export interface StaticFiles {
  /** The route handler: reads the file path from `req.params['*']` (the empty path without a wildcard). */
  handler: (req: Request<any>, res: Response, next?: Next) => unknown;
  /** Stops watching (watch mode). The loaded files keep being served. */
  close(): void;
  /** Number of files loaded (in memory or streamed). */
  readonly size: number;
}

export const DEFAULT_MEMORY_THRESHOLD = 1 << 20;
const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable';
/** Brotli quality 11 is slow (~1 MB/s): bigger files get quality 9, still better than gzip -9. */
const BROTLI_MAX_QUALITY_SIZE = 256 * 1024;
const LOAD_CONCURRENCY = 8;
const WATCH_DEBOUNCE_MS = 50;
const NEGOTIATION_CACHE_SIZE = 32;

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

// ----- content types ------------------------------------------------------------------

interface MimeInfo {
  type: string;
  compressible: boolean;
}

const MIME: Record<string, MimeInfo> = Object.create(null);
function mime(exts: string, type: string, compressible: boolean): void {
  for (const ext of exts.split(' ')) MIME[ext] = { type, compressible };
}
mime('html htm', 'text/html; charset=utf-8', true);
mime('css', 'text/css; charset=utf-8', true);
mime('js mjs cjs', 'text/javascript; charset=utf-8', true);
mime('json map', 'application/json; charset=utf-8', true);
mime('webmanifest', 'application/manifest+json; charset=utf-8', true);
mime('txt', 'text/plain; charset=utf-8', true);
mime('xml', 'application/xml', true);
mime('svg', 'image/svg+xml', true);
mime('csv', 'text/csv; charset=utf-8', true);
mime('md', 'text/markdown; charset=utf-8', true);
mime('wasm', 'application/wasm', true);
mime('ttf', 'font/ttf', true);
mime('otf', 'font/otf', true);
mime('ico', 'image/x-icon', true);
mime('pdf', 'application/pdf', false);
mime('png', 'image/png', false);
mime('jpg jpeg', 'image/jpeg', false);
mime('gif', 'image/gif', false);
mime('webp', 'image/webp', false);
mime('avif', 'image/avif', false);
mime('woff', 'font/woff', false);
mime('woff2', 'font/woff2', false);
mime('mp4', 'video/mp4', false);
mime('webm', 'video/webm', false);
mime('mp3', 'audio/mpeg', false);
mime('ogg', 'audio/ogg', false);
mime('wav', 'audio/wav', false);
mime('zip', 'application/zip', false);
mime('gz', 'application/gzip', false);
mime('br', 'application/x-brotli', false);
const OCTET_STREAM: MimeInfo = { type: 'application/octet-stream', compressible: false };

/** Extension of the last path segment, lower-case, without the dot ('' when none; '.env' has none). */
function extensionOf(path: string): string {
  const slash = path.lastIndexOf('/');
  const dot = path.lastIndexOf('.');
  return dot > slash + 1 ? path.slice(dot + 1).toLowerCase() : '';
}

function mimeInfo(path: string): MimeInfo {
  return MIME[extensionOf(path)] ?? OCTET_STREAM;
}

/**
 * Content-Type for a file path, from a built-in table of common web types
 * (`application/octet-stream` otherwise). Replaceable by the `mime-types` package.
 */
export function lookupMime(path: string): string {
  return mimeInfo(path).type;
}

// ----- the file table -------------------------------------------------------------------

/** A file as loaded from disk. */
interface Source {
  rel: string;
  /** Path we opened: inside the root, possibly through an in-root symlink. */
  abs: string;
  mime: MimeInfo;
  size: number;
  mtimeMs: number;
  /** In-memory files only. */
  body: Buffer | undefined;
  hash: string;
  br: Buffer | undefined;
  gzip: Buffer | undefined;
}

/** One representation of a file, with its header lists ready to write. */
interface Variant {
  body: Buffer;
  etag: string | undefined;
  /** name, value, name, value… for 200 (and 206, identity only). */
  headers: string[];
  /** name, value… for 304. */
  notModified: string[];
}

interface Entry {
  src: Source;
  large: boolean;
  size: number;
  /** Last-Modified truncated to seconds, in ms. */
  mtimeSec: number;
  lastModified: string | undefined;
  identity: Variant;
  br: Variant | undefined;
  gzip: Variant | undefined;
  /** bit 0: br variant, bit 1: gzip variant. */
  mask: number;
  /** Headers of a 416. */
  unsatisfiable: string[];
}

interface Config {
  maxAge: number;
  immutable: RegExp | string | undefined;
  index: string | false;
  fallback: string | undefined;
  dotfiles: 'ignore' | 'allow' | 'deny';
  threshold: number;
  precompress: boolean;
  watch: boolean;
  etag: boolean;
  lastModified: boolean;
}

const EMPTY = Buffer.alloc(0);

function cacheControlFor(rel: string, c: Config): string {
  const im = c.immutable;
  if (im !== undefined) {
    const path = '/' + rel;
    if (typeof im === 'string' ? path.startsWith(im) : (im.lastIndex = 0, im.test(path))) return IMMUTABLE_CACHE;
  }
  return `public, max-age=${c.maxAge}`;
}

/** Builds the per-request-ready entry of a source. `extraVary` is added to Vary (the SPA fallback varies on Accept). */
function buildEntry(src: Source, c: Config, extraVary: string | undefined): Entry {
  const large = src.body === undefined;
  const mtimeSec = Math.floor(src.mtimeMs / 1000) * 1000;
  const lastModified = c.lastModified ? new Date(mtimeSec).toUTCString() : undefined;
  const cacheControl = cacheControlFor(src.rel, c);
  const mask = (src.br ? 1 : 0) | (src.gzip ? 2 : 0);
  const varyList = [];
  if (mask !== 0) varyList.push('Accept-Encoding');
  if (extraVary !== undefined) varyList.push(extraVary);
  const vary = varyList.length > 0 ? varyList.join(', ') : undefined;
  const size = src.size;
  const tag = large ? `${size.toString(16)}-${Math.floor(src.mtimeMs).toString(16)}` : `${size.toString(16)}-${src.hash}`;

  const variant = (body: Buffer, suffix: string, encoding: string | undefined): Variant => {
    const etag = c.etag ? `"${tag}${suffix}"` : undefined;
    const headers = ['content-type', src.mime.type];
    const notModified: string[] = [];
    if (etag !== undefined) headers.push('etag', etag), notModified.push('etag', etag);
    if (lastModified !== undefined) headers.push('last-modified', lastModified), notModified.push('last-modified', lastModified);
    headers.push('cache-control', cacheControl, 'accept-ranges', 'bytes');
    notModified.push('cache-control', cacheControl);
    if (vary !== undefined) headers.push('vary', vary), notModified.push('vary', vary);
    if (encoding !== undefined) headers.push('content-encoding', encoding);
    return { body, etag, headers, notModified };
  };

  const unsatisfiable = ['content-range', `bytes */${size}`, 'accept-ranges', 'bytes'];
  if (vary !== undefined) unsatisfiable.push('vary', vary);
  return {
    src,
    large,
    size,
    mtimeSec,
    lastModified,
    identity: variant(src.body ?? EMPTY, '', undefined),
    br: src.br ? variant(src.br, '-br', 'br') : undefined,
    gzip: src.gzip ? variant(src.gzip, '-gz', 'gzip') : undefined,
    mask,
    unsatisfiable,
  };
}

// ----- Accept-Encoding negotiation --------------------------------------------------------

const IDENTITY = 0;
const BR = 1;
const GZIP = 2;

/**
 * For one Accept-Encoding value, the encoding to send for each combination of available
 * variants (index = mask: bit 0 br, bit 1 gzip). Ties prefer br, then gzip, then identity;
 * identity competes on q only when listed explicitly (it is always acceptable as a last resort).
 */
export function negotiateVariants(header: string): Uint8Array {
  const weights = parseAcceptEncoding(header);
  let qBr = weights.get('br') ?? -1;
  let qGz = weights.get('gzip') ?? -1;
  const qId = weights.get('identity') ?? -1;
  const qStar = weights.get('*') ?? -1;
  if (qBr < 0) qBr = qStar < 0 ? 0 : qStar;
  if (qGz < 0) qGz = qStar < 0 ? 0 : qStar;
  const base = qId < 0 ? 0 : qId;
  const out = new Uint8Array(4);
  for (let mask = 1; mask < 4; mask++) {
    let code = IDENTITY;
    let best = base;
    if (mask & 2 && qGz > 0 && qGz >= best) (code = GZIP), (best = qGz);
    if (mask & 1 && qBr > 0 && qBr >= best) code = BR;
    out[mask] = code;
  }
  return out;
}

// ----- conditional requests and ranges ------------------------------------------------------

/** If-None-Match: `*`, or any listed tag equal to ours under weak comparison. */
function etagMatches(header: string, etag: string | undefined): boolean {
  if (header === etag) return true;
  if (header.trim() === '*') return true;
  if (etag === undefined) return false;
  for (const part of header.split(',')) {
    let t = part.trim();
    if (t.startsWith('W/')) t = t.slice(2);
    if (t === etag) return true;
  }
  return false;
}

function notModifiedSince(header: string, e: Entry): boolean {
  if (header === e.lastModified) return true;
  const t = Date.parse(header);
  return !Number.isNaN(t) && e.mtimeSec <= t;
}

/** If-Range: a strong match of the identity ETag, or exactly the Last-Modified date. */
function ifRangeMatches(header: string, e: Entry): boolean {
  const h = header.trim();
  if (h.startsWith('"')) return h === e.identity.etag;
  if (h.startsWith('W/') || e.lastModified === undefined) return false;
  if (h === e.lastModified) return true;
  const t = Date.parse(h);
  return !Number.isNaN(t) && t === e.mtimeSec;
}

const RANGE_IGNORE = 0;
const RANGE_OK = 1;
const RANGE_UNSATISFIABLE = 2;
// Set by parseRange when it returns RANGE_OK (requests are handled one at a time).
let rangeStart = 0;
let rangeEnd = 0;
const RANGE_SPEC = /^\s*(\d*)\s*-\s*(\d*)\s*$/;

/**
 * One `bytes=` range. Multiple ranges and malformed headers are ignored (the full file
 * is sent with 200), as RFC 9110 allows.
 */
function parseRange(header: string, size: number): number {
  if (header.length < 7 || header.slice(0, 6).toLowerCase() !== 'bytes=') return RANGE_IGNORE;
  const spec = header.slice(6);
  if (spec.includes(',')) return RANGE_IGNORE;
  const m = RANGE_SPEC.exec(spec);
  if (m === null) return RANGE_IGNORE;
  const a = m[1]!;
  const b = m[2]!;
  if (a === '') {
    if (b === '') return RANGE_IGNORE;
    const n = Number(b);
    if (n === 0 || size === 0) return RANGE_UNSATISFIABLE;
    rangeStart = Math.max(0, size - n);
    rangeEnd = size - 1;
    return RANGE_OK;
  }
  const start = Number(a);
  if (b !== '' && Number(b) < start) return RANGE_IGNORE;
  if (start >= size) return RANGE_UNSATISFIABLE;
  rangeStart = start;
  rangeEnd = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  return RANGE_OK;
}

const FULL = 0;
const NOT_MODIFIED = 1;
const PARTIAL = 2;
const UNSATISFIABLE = 3;

/** What to answer: FULL/NOT_MODIFIED with `v` (the negotiated variant), PARTIAL (identity, rangeStart..rangeEnd) or UNSATISFIABLE. */
function decide(e: Entry, v: Variant, req: Request<any>): number {
  const inm = req._header('if-none-match');
  if (inm !== undefined) {
    if (etagMatches(inm, v.etag)) return NOT_MODIFIED;
  } else if (e.lastModified !== undefined) {
    const ims = req._header('if-modified-since');
    if (ims !== undefined && notModifiedSince(ims, e)) return NOT_MODIFIED;
  }
  const range = req._header('range');
  if (range === undefined) return FULL;
  const ifRange = req._header('if-range');
  if (ifRange !== undefined && !ifRangeMatches(ifRange, e)) return FULL;
  const r = parseRange(range, e.size);
  return r === RANGE_OK ? PARTIAL : r === RANGE_UNSATISFIABLE ? UNSATISFIABLE : FULL;
}

/** Precomputed, pre-validated header pairs: adopted whole when nothing else set headers yet. */
function writeHeaders(res: Response, h: string[]): void {
  if (res._headers === null && !res.headersSent) res._headers = h.slice();
  else for (let i = 0; i < h.length; i += 2) res.header(h[i]!, h[i + 1]!);
}

// ----- request path checks ------------------------------------------------------------------

const OK = 0;
const BAD_REQUEST = 400;
const NOT_FOUND = 404;
const ENCODED_SEPARATOR = /%(2f|5c)/i;
const DOUBLE_ENCODED = /%(2e|2f|5c|00)/i;
const DRIVE_LETTER = /^[A-Za-z]:/;

/** Decides whether a path that missed the table may go on to the dotfile and fallback rules. */
function checkPath(p: string, rawPath: string): number {
  if (p.includes('\0')) return BAD_REQUEST;
  if (p.includes('\\') || p.startsWith('/') || DRIVE_LETTER.test(p)) return NOT_FOUND;
  if (hasEncodedSeparator(rawPath)) return NOT_FOUND;
  if (p.includes('%') && DOUBLE_ENCODED.test(p)) return NOT_FOUND;
  const segments = p.split('/');
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    if (s === '..' || s === '.') return NOT_FOUND;
    if (s === '' && i !== segments.length - 1) return NOT_FOUND;
  }
  return OK;
}

function hasEncodedSeparator(rawPath: string): boolean {
  return rawPath.includes('%') && ENCODED_SEPARATOR.test(rawPath);
}

function hasDotSegment(p: string): boolean {
  return p.startsWith('.') || p.includes('/.');
}

// ----- loading -----------------------------------------------------------------------------

function checkOptions(o: StaticOptions): Config {
  if (typeof o !== 'object' || o === null) throw new TypeError('Static options must be an object');
  const maxAge = o.maxAge ?? 0;
  if (!(Number.isFinite(maxAge) && maxAge >= 0)) throw new TypeError('maxAge must be a non-negative number of seconds');
  if (o.immutable !== undefined && typeof o.immutable !== 'string' && !(o.immutable instanceof RegExp)) throw new TypeError('immutable must be a RegExp or a path prefix');
  const index = o.index ?? 'index.html';
  if (index !== false && (typeof index !== 'string' || index === '' || /[/\\\0]/.test(index))) throw new TypeError('index must be a file name or false');
  const dotfiles = o.dotfiles ?? 'ignore';
  if (!['ignore', 'allow', 'deny'].includes(dotfiles)) throw new TypeError("dotfiles must be 'ignore', 'allow' or 'deny'");
  const threshold = o.memoryThreshold ?? DEFAULT_MEMORY_THRESHOLD;
  if (!(Number.isFinite(threshold) && threshold >= 0)) throw new TypeError('memoryThreshold must be a non-negative number of bytes');
  let fallback: string | undefined;
  if (o.fallback !== undefined) {
    if (typeof o.fallback !== 'string') throw new TypeError('fallback must be a path relative to the directory');
    fallback = o.fallback.replace(/^(\.?\/)+/, '');
    if (fallback === '' || checkPath(fallback, '') !== OK || fallback.endsWith('/')) throw new TypeError(`Invalid fallback path: ${JSON.stringify(o.fallback)}`);
  }
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
    watch: o.watch ?? false,
    etag: o.etag ?? true,
    lastModified: o.lastModified ?? true,
  };
}

async function compressVariants(body: Buffer, info: MimeInfo): Promise<{ br: Buffer | undefined; gzip: Buffer | undefined }> {
  if (!info.compressible || body.length < 32) return { br: undefined, gzip: undefined };
  const text = info.type.startsWith('text/') || info.type.includes('json') || info.type.includes('xml') || info.type.includes('javascript');
  const [br, gz] = await Promise.all([
    brotliAsync(body, {
      params: {
        [zc.BROTLI_PARAM_QUALITY]: body.length <= BROTLI_MAX_QUALITY_SIZE ? 11 : 9,
        [zc.BROTLI_PARAM_MODE]: text ? zc.BROTLI_MODE_TEXT : zc.BROTLI_MODE_GENERIC,
        [zc.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    }),
    gzipAsync(body, { level: 9 }),
  ]);
  return { br: br.length < body.length ? br : undefined, gzip: gz.length < body.length ? gz : undefined };
}

/** Runs `fn` over `items` with bounded concurrency. */
async function pool<T>(items: T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(LOAD_CONCURRENCY, items.length) }, worker));
}

function isErrno(err: unknown, ...codes: string[]): boolean {
  return codes.includes((err as NodeJS.ErrnoException | null)?.code ?? '');
}

/**
 * Loads `dir` and returns a handler that serves it. Files up to `memoryThreshold` are read
 * into memory (with their compressed variants) before the promise resolves.
 */
export async function createStatic(dir: string, options: StaticOptions = {}): Promise<StaticFiles> {
  const c = checkOptions(options);
  const notFound = options.notFound ?? defaultNotFound;
  const root = await realpath(resolve(dir));
  if (!(await stat(root)).isDirectory()) throw new TypeError(`Not a directory: ${dir}`);
  const rootPrefix = root.endsWith(sep) ? root : root + sep;
  const inside = (real: string) => real.startsWith(rootPrefix);
  const skipName = (name: string) => c.dotfiles !== 'allow' && name.startsWith('.');

  const files = new Map<string, Entry>();
  let table = new Map<string, Entry>();
  let fallbackEntry: Entry | undefined;
  const negotiated = new Map<string, Uint8Array>();
  const noPreference = negotiateVariants('identity');

  /** Reads one file (or records a large one). Undefined when it is not a regular file inside the root. */
  async function loadFile(abs: string, rel: string): Promise<Entry | undefined> {
    let real: string;
    try {
      real = await realpath(abs);
    } catch {
      return undefined; // gone, or a broken symlink
    }
    if (!inside(real)) return undefined;
    let st;
    let body: Buffer | undefined;
    try {
      st = await stat(real);
      if (!st.isFile()) return undefined;
      if (st.size <= c.threshold) body = await readFile(real);
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'ENOTDIR')) return undefined; // removed while we were loading
      throw err;
    }
    const info = mimeInfo(rel);
    const src: Source = { rel, abs, mime: info, size: st.size, mtimeMs: st.mtimeMs, body: undefined, hash: '', br: undefined, gzip: undefined };
    if (body !== undefined) {
      if (body.length > c.threshold) return buildEntry(src, c, undefined); // grew meanwhile
      src.body = body;
      src.size = body.length;
      src.hash = hash('sha1', body, 'base64url').slice(0, 16);
      if (c.precompress) Object.assign(src, await compressVariants(body, info));
    }
    return buildEntry(src, c, undefined);
  }

  /** Lists the regular files (and symlinks to files inside the root) under a directory. */
  async function listFiles(absDir: string, relDir: string, visited: Set<string>, out: { abs: string; rel: string }[]): Promise<void> {
    let realDir: string;
    try {
      realDir = await realpath(absDir);
    } catch {
      return;
    }
    if (visited.has(realDir) || !(realDir === root || inside(realDir))) return;
    visited.add(realDir);
    let dirents;
    try {
      dirents = await readdir(absDir, { withFileTypes: true });
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'ENOTDIR', 'EACCES')) return;
      throw err;
    }
    for (const d of dirents) {
      if (skipName(d.name) || d.name.includes('\\')) continue;
      const abs = join(absDir, d.name);
      const rel = relDir === '' ? d.name : `${relDir}/${d.name}`;
      if (d.isDirectory()) await listFiles(abs, rel, visited, out);
      else if (d.isFile()) out.push({ abs, rel });
      else if (d.isSymbolicLink()) {
        try {
          const target = await stat(abs);
          if (target.isDirectory()) await listFiles(abs, rel, visited, out);
          else if (target.isFile()) out.push({ abs, rel });
        } catch {
          // broken link
        }
      }
    }
  }

  async function loadTree(absDir: string, relDir: string): Promise<Set<string>> {
    const list: { abs: string; rel: string }[] = [];
    await listFiles(absDir, relDir, new Set(), list);
    const seen = new Set<string>();
    await pool(list, async ({ abs, rel }) => {
      const prev = files.get(rel);
      if (prev !== undefined) {
        // Unchanged since loaded (watch mode rescans): keep it.
        try {
          const st = await stat(abs);
          if (st.size === prev.src.size && st.mtimeMs === prev.src.mtimeMs) {
            seen.add(rel);
            return;
          }
        } catch {
          return;
        }
      }
      const e = await loadFile(abs, rel);
      if (e !== undefined) {
        files.set(rel, e);
        seen.add(rel);
      }
    });
    return seen;
  }

  /** The lookup table: every file by its path, plus `dir`, `dir/` (and '' for the root) for index files. */
  function rebuildTable(): void {
    const next = new Map<string, Entry>();
    for (const [rel, e] of files) next.set(rel, e);
    if (c.index !== false) {
      for (const [rel, e] of files) {
        const slash = rel.lastIndexOf('/');
        if (rel.slice(slash + 1) !== c.index) continue;
        const dirKey = slash === -1 ? '' : rel.slice(0, slash);
        if (dirKey === '') next.set('', e);
        else {
          if (!next.has(dirKey)) next.set(dirKey, e);
          next.set(dirKey + '/', e);
        }
      }
    }
    const fb = c.fallback === undefined ? undefined : files.get(c.fallback);
    fallbackEntry = fb === undefined ? undefined : buildEntry(fb.src, c, 'Accept');
    table = next;
  }

  await loadTree(root, '');
  rebuildTable();
  if (c.fallback !== undefined && fallbackEntry === undefined && !c.watch) {
    throw new TypeError(`Static fallback file not found in ${dir}: ${c.fallback}`);
  }

  // ----- serving -----------------------------------------------------------------------

  function negotiate(e: Entry, req: Request<any>): Variant {
    const ae = req._header('accept-encoding');
    let codes: Uint8Array;
    if (ae === undefined) codes = noPreference;
    else {
      let cached = negotiated.get(ae);
      if (cached === undefined) {
        cached = negotiateVariants(ae);
        if (negotiated.size >= NEGOTIATION_CACHE_SIZE) negotiated.delete(negotiated.keys().next().value!);
        negotiated.set(ae, cached);
      }
      codes = cached;
    }
    const code = codes[e.mask];
    return code === BR ? e.br! : code === GZIP ? e.gzip! : e.identity;
  }

  function serveMemory(e: Entry, req: Request<any>, res: Response): void {
    const v = e.mask === 0 ? e.identity : negotiate(e, req);
    const d = decide(e, v, req);
    if (d === FULL) {
      writeHeaders(res, v.headers);
      res.end(v.body);
    } else if (d === NOT_MODIFIED) {
      res.status(304);
      writeHeaders(res, v.notModified);
      res.end();
    } else if (d === PARTIAL) {
      res.status(206);
      writeHeaders(res, e.identity.headers);
      res.header('content-range', `bytes ${rangeStart}-${rangeEnd}/${e.size}`);
      res.end(e.identity.body.subarray(rangeStart, rangeEnd + 1));
    } else {
      res.status(416);
      writeHeaders(res, e.unsatisfiable);
      res.end();
    }
  }

  /** Large files: re-check the real path, open, stat, then stream (with backpressure) or answer from the stat. */
  async function serveLarge(e: Entry, req: Request<any>, res: Response, extraVary: string | undefined): Promise<unknown> {
    const src = e.src;
    let fh;
    try {
      const real = await realpath(src.abs);
      if (!inside(real)) return notFound(req, res);
      fh = await open(real, fsc.O_RDONLY | fsc.O_NOFOLLOW);
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'ENOTDIR', 'ELOOP', 'EACCES')) return notFound(req, res);
      throw err;
    }
    let handedOff = false;
    try {
      const st = await fh.stat();
      if (!st.isFile()) return notFound(req, res);
      let cur = e;
      if (st.size !== src.size || st.mtimeMs !== src.mtimeMs) {
        // Changed on disk since loaded: answer from what is there now.
        cur = buildEntry({ ...src, size: st.size, mtimeMs: st.mtimeMs }, c, extraVary);
      }
      if (res.finished) return;
      const d = decide(cur, cur.identity, req);
      if (d === NOT_MODIFIED) {
        res.status(304);
        writeHeaders(res, cur.identity.notModified);
        return res.end();
      }
      if (d === UNSATISFIABLE) {
        res.status(416);
        writeHeaders(res, cur.unsatisfiable);
        return res.end();
      }
      let start = 0;
      let end = cur.size - 1;
      writeHeaders(res, cur.identity.headers);
      if (d === PARTIAL) {
        start = rangeStart;
        end = rangeEnd;
        res.status(206).header('content-range', `bytes ${start}-${end}/${cur.size}`);
      }
      if (end < start) return res.end(); // empty file
      handedOff = true;
      // A known length: Content-Length on GET (no chunked encoding), the exact length on HEAD.
      await res.stream(fh.createReadStream({ start, end }), { length: end - start + 1 });
    } finally {
      if (!handedOff) await fh.close().catch(() => {});
    }
  }

  function serve(e: Entry, req: Request<any>, res: Response, extraVary: string | undefined): unknown {
    if (e.large) return serveLarge(e, req, res, extraVary);
    serveMemory(e, req, res);
    return undefined;
  }

  function miss(p: string, req: Request<any>, res: Response): unknown {
    const verdict = checkPath(p, req.path);
    if (verdict === BAD_REQUEST) return res.status(400).json({ error: 'Bad Request' });
    if (verdict !== OK) return notFound(req, res);
    if (hasDotSegment(p)) {
      if (c.dotfiles === 'deny') return res.status(403).json({ error: 'Forbidden' });
      if (c.dotfiles === 'ignore') return notFound(req, res);
    }
    const fb = fallbackEntry;
    if (fb !== undefined && extensionOf(p) === '') {
      const m = req.method;
      if (m === 'GET' || m === 'HEAD') {
        const accept = req._header('accept');
        if (accept !== undefined && accept.includes('text/html')) return serve(fb, req, res, 'Accept');
        res.header('vary', 'Accept');
      }
    }
    return notFound(req, res);
  }

  const handler = (req: Request<any>, res: Response): unknown => {
    const params = req.params as Record<string, string> | undefined;
    const p = params === undefined ? '' : (params['*'] ?? '');
    const e = table.get(p);
    // A hit is a path we loaded from inside the root. Its only other spelling is an encoded
    // slash (a%2Fb for a/b), refused like every other separator trick.
    if (e !== undefined && (!p.includes('/') || !hasEncodedSeparator(req.path))) {
      const m = req.method;
      if (m !== 'GET' && m !== 'HEAD') return methodNotAllowed(res);
      return serve(e, req, res, undefined);
    }
    return miss(p, req, res);
  };

  // ----- watch mode ------------------------------------------------------------------------

  let watcher: FSWatcher | undefined;
  let closed = false;
  let closeWatch = (): void => {};
  if (c.watch) {
    const pending = new Set<string>();
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<void> = Promise.resolve();
    let rescanAll = false;

    const apply = async (paths: string[], all: boolean) => {
      if (closed) return;
      if (all) {
        const seen = await loadTree(root, '');
        for (const rel of [...files.keys()]) if (!seen.has(rel)) files.delete(rel);
      }
      for (const rel of all ? [] : paths) {
        if (rel.split('/').some(skipName)) continue;
        const abs = join(root, rel);
        let st;
        try {
          st = await stat(abs);
        } catch {
          st = undefined;
        }
        if (st?.isFile()) {
          const e = await loadFile(abs, rel).catch(() => undefined);
          if (e !== undefined) files.set(rel, e);
          else files.delete(rel);
        } else if (st?.isDirectory()) {
          const seen = await loadTree(abs, rel);
          for (const key of [...files.keys()]) if (key.startsWith(rel + '/') && !seen.has(key)) files.delete(key);
        } else {
          files.delete(rel);
          for (const key of [...files.keys()]) if (key.startsWith(rel + '/')) files.delete(key);
        }
      }
      if (!closed) rebuildTable();
    };

    const flush = () => {
      timer = undefined;
      const paths = [...pending];
      const all = rescanAll;
      pending.clear();
      rescanAll = false;
      running = running.then(() => apply(paths, all)).catch(() => {});
    };

    watcher = watch(root, { recursive: true }, (_event, filename) => {
      if (closed) return;
      const rel = filename === null ? '' : String(filename).split(sep).join('/');
      if (rel === '') rescanAll = true;
      else pending.add(rel);
      if (timer !== undefined) clearTimeout(timer);
      timer = setTimeout(flush, WATCH_DEBOUNCE_MS);
    });
    watcher.on('error', () => {
      // e.g. the directory itself was removed: keep serving what is loaded
    });
    const stop = () => {
      if (timer !== undefined) clearTimeout(timer);
    };
    closeWatch = () => {
      stop();
      watcher?.close();
    };
  }

  return {
    handler,
    close() {
      if (closed) return;
      closed = true;
      closeWatch();
    },
    get size() {
      return files.size;
    },
  };
}

function defaultNotFound(req: Request<any>, res: Response): void {
  res.status(404).json({ error: 'Not Found' });
}

function methodNotAllowed(res: Response): void {
  res.status(405).header('allow', 'GET, HEAD').json({ error: 'Method Not Allowed' });
}

