// A loaded file and everything a request for it needs, computed once: each representation
// (identity, brotli, gzip) with its ETag and its header lists ready to write, the
// Last-Modified date, and the headers of a 416.
import { prepareHeaders, type PreparedHeaders } from '../../http/io/prepared-headers.ts';
import type { MimeInfo } from './mime.ts';
import type { StaticConfig } from './options.ts';

/** A file as loaded from disk. */
export interface Source {
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
  /** Large files with `precompressed`: the build's `<file>.br` / `<file>.gz`, streamed from disk like the file. */
  brFile?: string | undefined;
  gzipFile?: string | undefined;
}

/** One representation of a file, with its header lists ready to write. */
export interface Variant {
  /** Empty for large files: they are streamed from disk. */
  body: Buffer;
  /** A large file's precompressed variant: the path of its `.br`/`.gz` file (undefined for identity). */
  file: string | undefined;
  etag: string | undefined;
  /** For 200 (and 206, identity only). */
  headers: PreparedHeaders;
  /** For 304. */
  notModified: PreparedHeaders;
}

export interface Entry {
  src: Source;
  /** Over the memory threshold: streamed from disk. */
  large: boolean;
  size: number;
  /** Last-Modified truncated to seconds, in ms. */
  mtimeSec: number;
  lastModified: string | undefined;
  identity: Variant;
  br: Variant | undefined;
  gzip: Variant | undefined;
  /** Which variants exist: VARIANT_BR | VARIANT_GZIP (see negotiate.ts). */
  mask: number;
  /** Headers of a 416. */
  unsatisfiable: PreparedHeaders;
}

export const VARIANT_BR = 1;
export const VARIANT_GZIP = 2;

const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable';
const EMPTY = Buffer.alloc(0);

function cacheControlFor(rel: string, c: StaticConfig): string {
  const im = c.immutable;
  if (im !== undefined) {
    const path = '/' + rel;
    if (typeof im === 'string' ? path.startsWith(im) : ((im.lastIndex = 0), im.test(path))) return IMMUTABLE_CACHE;
  }
  return `public, max-age=${c.maxAge}`;
}

/** What every variant of one file shares. */
interface Common {
  type: string;
  tag: string;
  lastModified: string | undefined;
  cacheControl: string;
  vary: string | undefined;
  withEtag: boolean;
}

function buildVariant(common: Common, body: Buffer, suffix: string, encoding: string | undefined, file?: string): Variant {
  const etag = common.withEtag ? `"${common.tag}${suffix}"` : undefined;
  const headers: Record<string, string> = { 'content-type': common.type };
  const notModified: Record<string, string> = {};
  if (etag !== undefined) headers.etag = notModified.etag = etag;
  if (common.lastModified !== undefined) headers['last-modified'] = notModified['last-modified'] = common.lastModified;
  headers['cache-control'] = notModified['cache-control'] = common.cacheControl;
  headers['accept-ranges'] = 'bytes';
  if (common.vary !== undefined) headers.vary = notModified.vary = common.vary;
  if (encoding !== undefined) headers['content-encoding'] = encoding;
  return { body, file, etag, headers: prepareHeaders(headers), notModified: prepareHeaders(notModified) };
}

/** Builds the per-request-ready entry of a source. `extraVary` is added to Vary (the SPA fallback varies on Accept). */
export function buildEntry(src: Source, c: StaticConfig, extraVary: string | undefined): Entry {
  const large = src.body === undefined;
  const mtimeSec = Math.floor(src.mtimeMs / 1000) * 1000;
  const lastModified = c.lastModified ? new Date(mtimeSec).toUTCString() : undefined;
  const mask = (src.br || src.brFile ? VARIANT_BR : 0) | (src.gzip || src.gzipFile ? VARIANT_GZIP : 0);
  const varyList = [];
  if (mask !== 0) varyList.push('Accept-Encoding');
  if (extraVary !== undefined) varyList.push(extraVary);
  const vary = varyList.length > 0 ? varyList.join(', ') : undefined;
  const size = src.size;
  // Large files are not hashed (that would mean reading them): size and mtime stand in.
  const tag = large ? `${size.toString(16)}-${Math.floor(src.mtimeMs).toString(16)}` : `${size.toString(16)}-${src.hash}`;
  const common: Common = { type: src.mime.type, tag, lastModified, cacheControl: cacheControlFor(src.rel, c), vary, withEtag: c.etag };

  const unsatisfiable = prepareHeaders(
    vary === undefined
      ? { 'content-range': `bytes */${size}`, 'accept-ranges': 'bytes' }
      : { 'content-range': `bytes */${size}`, 'accept-ranges': 'bytes', vary },
  );
  return {
    src,
    large,
    size,
    mtimeSec,
    lastModified,
    identity: buildVariant(common, src.body ?? EMPTY, '', undefined),
    br: src.br ? buildVariant(common, src.br, '-br', 'br') : src.brFile ? buildVariant(common, EMPTY, '-br', 'br', src.brFile) : undefined,
    gzip: src.gzip
      ? buildVariant(common, src.gzip, '-gz', 'gzip')
      : src.gzipFile
        ? buildVariant(common, EMPTY, '-gz', 'gzip', src.gzipFile)
        : undefined,
    mask,
    unsatisfiable,
  };
}
