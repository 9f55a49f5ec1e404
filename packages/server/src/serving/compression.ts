// Dynamic response compression (brotli, gzip), negotiated from Accept-Encoding.
import { constants, brotliCompress, brotliCompressSync, createBrotliCompress, createGzip, gzip, gzipSync, type BrotliCompress, type Gzip } from 'node:zlib';
import { dynamicBrotliOptions, gzipOptions, streamBrotliOptions } from './compressors.ts';

export type Encoding = 'br' | 'gzip';

export interface CompressionOptions {
  /** Smallest body worth compressing, in bytes. Default 1024. */
  threshold?: number;
  /** Encodings offered, in order of preference. Default ['br', 'gzip']. */
  encodings?: Encoding[];
  /** Brotli quality 0–11. Default 4: dynamic responses need speed more than the last bytes. */
  brotliQuality?: number;
  /** gzip level 1–9. Default 6. */
  gzipLevel?: number;
  /**
   * Don't compress answers to requests carrying Cookie or Authorization. Compressing
   * secrets next to attacker-influenced text lets an attacker who can watch sizes guess
   * them (BREACH). Default false.
   */
  skipCredentialed?: boolean;
  /** Which content types to compress. Default: text, JSON, JavaScript, XML, SVG, wasm (not SSE). */
  filter?: (contentType: string) => boolean;
}

export interface Compression {
  threshold: number;
  encodings: Encoding[];
  brotliQuality: number;
  gzipLevel: number;
  skipCredentialed: boolean;
  filter: (contentType: string) => boolean;
}

/**
 * Bodies below this are compressed synchronously: for a few KiB, zlib takes less time than
 * a trip through the libuv thread pool costs, and the response goes out in the same tick.
 * Larger bodies go to the thread pool so one big response never stalls the event loop.
 */
export const SYNC_LIMIT = 32 * 1024;

const COMPRESSIBLE = /^(?:text\/(?!event-stream)|application\/(?:json|javascript|ecmascript|xml|x-ndjson|ld\+json|manifest\+json|wasm|graphql)|image\/svg\+xml|[^/]+\/[^;]*\+(?:json|xml))/i;

function isCompressible(contentType: string): boolean {
  return COMPRESSIBLE.test(contentType);
}

export function resolveCompression(value: boolean | CompressionOptions | undefined, inherited: Compression | null): Compression | null {
  if (value === undefined) return inherited;
  if (value === false) return null;
  const o = value === true ? {} : value;
  const c: Compression = {
    threshold: o.threshold ?? 1024,
    encodings: o.encodings ?? ['br', 'gzip'],
    brotliQuality: o.brotliQuality ?? 4,
    gzipLevel: o.gzipLevel ?? 6,
    skipCredentialed: o.skipCredentialed ?? false,
    filter: o.filter ?? isCompressible,
  };
  if (!Number.isInteger(c.threshold) || c.threshold < 0) throw new TypeError('compression threshold must be a non-negative integer');
  if (!c.encodings.every((e) => e === 'br' || e === 'gzip')) throw new TypeError("compression encodings must be 'br' and/or 'gzip'");
  if (!(Number.isInteger(c.brotliQuality) && c.brotliQuality >= 0 && c.brotliQuality <= 11)) throw new TypeError('brotliQuality must be 0-11');
  if (!(Number.isInteger(c.gzipLevel) && c.gzipLevel >= 1 && c.gzipLevel <= 9)) throw new TypeError('gzipLevel must be 1-9');
  return c;
}

// Clients send a few distinct Accept-Encoding strings: parse each once.
const negotiated = new Map<string, Map<string, Encoding | null>>();

/**
 * Picks the best of `offered` (in our order of preference) that the Accept-Encoding header
 * allows, honouring q-values, `*` and `q=0` refusals. Null means identity.
 */
export function negotiateEncoding(header: string | undefined, offered: readonly Encoding[]): Encoding | null {
  if (!header) return null;
  const offerKey = offered.join(',');
  let perHeader = negotiated.get(header);
  const cached = perHeader?.get(offerKey);
  if (cached !== undefined) return cached;
  const q = parseAcceptEncoding(header);
  let best: Encoding | null = null;
  let bestQ = 0;
  for (const enc of offered) {
    const weight = q.get(enc) ?? q.get('*') ?? 0;
    if (weight > bestQ) {
      best = enc;
      bestQ = weight;
    }
  }
  if (negotiated.size > 256) negotiated.clear();
  if (!perHeader) negotiated.set(header, (perHeader = new Map()));
  perHeader.set(offerKey, best);
  return best;
}

/** Accept-Encoding as coding → q (lower-case; x-gzip counts as gzip; malformed q → 0). */
export function parseAcceptEncoding(header: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().split(';');
    if (!name) continue;
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split('=');
      if (k?.trim().toLowerCase() !== 'q') continue;
      // A malformed weight must not make an encoding preferred: treat it as a refusal.
      q = /^\s*(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)\s*$/.test(v ?? '') ? Number(v) : 0;
    }
    const key = name.trim().toLowerCase();
    const coding = key === 'x-gzip' ? 'gzip' : key;
    out.set(coding, Math.max(q, out.get(coding) ?? -1));
  }
  return out;
}

export function compressSync(body: Uint8Array, encoding: Encoding, c: Compression): Buffer {
  return encoding === 'br'
    ? brotliCompressSync(body, dynamicBrotliOptions(c.brotliQuality, body.byteLength))
    : gzipSync(body, gzipOptions(c.gzipLevel));
}

export function compressAsync(body: Uint8Array, encoding: Encoding, c: Compression): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const done = (err: Error | null, out: Buffer) => (err ? reject(err) : resolve(out));
    if (encoding === 'br') brotliCompress(body, dynamicBrotliOptions(c.brotliQuality, body.byteLength), done);
    else gzip(body, gzipOptions(c.gzipLevel), done);
  });
}

/**
 * Compresses a stream chunk by chunk, flushing after each so every chunk the source
 * produced reaches the client promptly (streams are often live: logs, progress, HTML
 * shells sent before data).
 */
export async function* compressChunks(source: AsyncIterable<Uint8Array | string>, encoding: Encoding, c: Compression): AsyncGenerator<Buffer> {
  const z: BrotliCompress | Gzip = encoding === 'br' ? createBrotliCompress(streamBrotliOptions(c.brotliQuality)) : createGzip(gzipOptions(c.gzipLevel));
  const out: Buffer[] = [];
  z.on('data', (chunk: Buffer) => out.push(chunk));
  const failed = new Promise<never>((_, reject) => z.once('error', reject));
  failed.catch(() => {});
  const flushKind = encoding === 'br' ? constants.BROTLI_OPERATION_FLUSH : constants.Z_SYNC_FLUSH;
  const drain = () => {
    const chunk = out.length === 1 ? out[0]! : Buffer.concat(out);
    out.length = 0;
    return chunk;
  };
  try {
    for await (const chunk of source) {
      z.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      await Promise.race([new Promise<void>((r) => z.flush(flushKind, () => r())), failed]);
      if (out.length > 0) yield drain();
    }
    const ended = new Promise<void>((r) => z.once('end', () => r()));
    z.end();
    await Promise.race([ended, failed]);
    if (out.length > 0) yield drain();
  } finally {
    z.destroy();
  }
}
