// Content types of static files, from a built-in table of common web types. Each type
// also says whether compressing it pays off (text does; PNG, JPEG, fonts in woff2… are
// already compressed).

export interface MimeInfo {
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
export function extensionOf(path: string): string {
  const slash = path.lastIndexOf('/');
  const dot = path.lastIndexOf('.');
  return dot > slash + 1 ? path.slice(dot + 1).toLowerCase() : '';
}

export function mimeInfo(path: string, overrides?: ReadonlyMap<string, string>): MimeInfo {
  const ext = extensionOf(path);
  const own = overrides?.get(ext);
  if (own === undefined) return MIME[ext] ?? OCTET_STREAM;
  // A type from the caller's table. When the built-in table agrees on the type, its entry (with
  // its charset, and whether to compress) is kept; otherwise compressible when text-like.
  const builtIn = MIME[ext];
  if (builtIn !== undefined && builtIn.type.split(';')[0] === own.split(';')[0]!.trim()) return builtIn;
  const info = { type: own, compressible: false };
  info.compressible = isTextual(info) || own.startsWith('image/svg');
  return info;
}

/** Whether a type is text-like, so brotli can use its text mode. */
export function isTextual(info: MimeInfo): boolean {
  const t = info.type;
  return t.startsWith('text/') || t.includes('json') || t.includes('xml') || t.includes('javascript');
}

/**
 * Content-Type for a file path, from a built-in table of common web types
 * (`application/octet-stream` otherwise). Replaceable by the `mime-types` package.
 */
export function lookupMime(path: string): string {
  return mimeInfo(path).type;
}
