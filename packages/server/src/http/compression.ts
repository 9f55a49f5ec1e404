// Dynamic response compression (brotli, gzip), negotiated from Accept-Encoding.
import {
  constants,
  brotliCompress,
  brotliCompressSync,
  createBrotliCompress,
  createGzip,
  gzip,
  gzipSync,
  type BrotliCompress,
  type Gzip,
} from 'node:zlib';
import { checkKnownKeys } from '../core/options-check.ts';
import { dynamicBrotliOptions, gzipOptions, streamBrotliOptions, streamGzipOptions } from './compressors.ts';

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
  /**
   * Streamed bodies compressed at once, counted across the process: each holds a compressor
   * (≈ 0.3–2 MB of native memory) for as long as it streams. Further streams are sent
   * uncompressed. Default 64; 0 never compresses streams.
   */
  maxStreams?: number;
}

export interface Compression {
  threshold: number;
  encodings: Encoding[];
  brotliQuality: number;
  gzipLevel: number;
  skipCredentialed: boolean;
  filter: (contentType: string) => boolean;
  maxStreams: number;
}

/**
 * Bodies below this are compressed synchronously: for a few KiB, zlib takes less time than
 * a trip through the libuv thread pool costs, and the response goes out in the same tick.
 * Larger bodies go to the thread pool so one big response never stalls the event loop.
 */
export const SYNC_LIMIT = 32 * 1024;

const DEFAULT_MAX_STREAMS = 64;

const COMPRESSIBLE =
  /^(?:text\/(?!event-stream)|application\/(?:json|javascript|ecmascript|xml|x-ndjson|ld\+json|manifest\+json|wasm|graphql)|image\/svg\+xml|[^/]+\/[^;]*\+(?:json|xml))/i;

function isCompressible(contentType: string): boolean {
  return COMPRESSIBLE.test(contentType);
}

const COMPRESSION_KEYS = Object.keys({
  threshold: true,
  encodings: true,
  brotliQuality: true,
  gzipLevel: true,
  skipCredentialed: true,
  filter: true,
  maxStreams: true,
} satisfies Record<keyof CompressionOptions, true>);

export function resolveCompression(value: boolean | CompressionOptions | undefined, inherited: Compression | null): Compression | null {
  if (value === undefined) return inherited;
  if (value === false) return null;
  if (value !== true && (typeof value !== 'object' || value === null))
    throw new TypeError('compression must be a boolean or an options object');
  const o = value === true ? {} : value;
  checkKnownKeys('compression', o, COMPRESSION_KEYS);
  const c: Compression = {
    threshold: o.threshold ?? 1024,
    encodings: o.encodings ?? ['br', 'gzip'],
    brotliQuality: o.brotliQuality ?? 4,
    gzipLevel: o.gzipLevel ?? 6,
    skipCredentialed: o.skipCredentialed ?? false,
    filter: o.filter ?? isCompressible,
    maxStreams: o.maxStreams ?? DEFAULT_MAX_STREAMS,
  };
  if (!Number.isInteger(c.threshold) || c.threshold < 0) throw new TypeError('compression threshold must be a non-negative integer');
  if (!c.encodings.every((e) => e === 'br' || e === 'gzip')) throw new TypeError("compression encodings must be 'br' and/or 'gzip'");
  if (!(Number.isInteger(c.brotliQuality) && c.brotliQuality >= 0 && c.brotliQuality <= 11))
    throw new TypeError('brotliQuality must be 0-11');
  if (!(Number.isInteger(c.gzipLevel) && c.gzipLevel >= 1 && c.gzipLevel <= 9)) throw new TypeError('gzipLevel must be 1-9');
  if (!((Number.isInteger(c.maxStreams) && c.maxStreams >= 0) || c.maxStreams === Infinity))
    throw new TypeError('maxStreams must be a non-negative integer (or Infinity)');
  if (typeof c.filter !== 'function') throw new TypeError('compression filter must be a function');
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

// ----- streamed bodies ----------------------------------------------------------------
//
// A streaming compressor lives as long as its response and holds native memory all that
// time (brotli: its window and hash tables). So streams get a small window (compressors.ts),
// at most `maxStreams` of them compress at once in the process (the others are sent as
// they are), and a compressor is freed the moment its client leaves, even while the
// stream waits for its source.

let liveStreams = 0;

/** Streaming compressors alive in the process (for tests and metrics). @internal */
export function liveCompressedStreams(): number {
  return liveStreams;
}

/** Whether one more streamed body may be compressed under `c.maxStreams`. */
export function streamCompressionAvailable(c: Compression): boolean {
  return liveStreams < c.maxStreams;
}

/**
 * Compresses a stream chunk by chunk, flushing after each so every chunk the source
 * produced reaches the client promptly (streams are often live: logs, progress, HTML
 * shells sent before data). `signal` (the client left) frees the compressor at once.
 * The compressor is created, and counted, when iteration starts: start iterating in the
 * same tick as the `streamCompressionAvailable` check so the cap cannot be overshot.
 */
export async function* compressChunks(
  source: AsyncIterable<Uint8Array | string>,
  encoding: Encoding,
  c: Compression,
  signal?: AbortSignal,
): AsyncGenerator<Buffer> {
  if (signal?.aborted) return;
  const z = new StreamCompressor(encoding, c);
  signal?.addEventListener('abort', z);
  try {
    for await (const chunk of source) {
      const out = await z.push(chunk);
      if (z.closed) return;
      if (out !== null) yield out;
    }
    const out = await z.finish();
    if (out !== null) yield out;
  } finally {
    signal?.removeEventListener('abort', z);
    z.close();
  }
}

/** One zlib stream, counted in `liveStreams` until closed. Listens for `abort` itself (no closure). */
class StreamCompressor {
  closed = false;
  private readonly z: BrotliCompress | Gzip;
  private readonly flushKind: number;
  private readonly out: Buffer[] = [];
  private error: Error | null = null;
  /** Resolves the pending flush or end: on completion, error or close. */
  private wake: (() => void) | null = null;

  constructor(encoding: Encoding, c: Compression) {
    this.z = encoding === 'br' ? createBrotliCompress(streamBrotliOptions(c.brotliQuality)) : createGzip(streamGzipOptions(c.gzipLevel));
    this.flushKind = encoding === 'br' ? constants.BROTLI_OPERATION_FLUSH : constants.Z_SYNC_FLUSH;
    this.z.on('data', (chunk: Buffer) => this.out.push(chunk));
    this.z.on('error', (err: Error) => {
      this.error = err;
      this.settle();
    });
    liveStreams++;
  }

  /** Compresses and flushes one chunk; returns the output (null when none). */
  async push(chunk: Uint8Array | string): Promise<Buffer | null> {
    if (this.closed) return null;
    this.z.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    await new Promise<void>((resolve) => {
      this.wake = resolve;
      this.z.flush(this.flushKind, () => this.settle());
    });
    return this.take();
  }

  /** Ends the stream; returns the last output. */
  async finish(): Promise<Buffer | null> {
    if (this.closed) return null;
    await new Promise<void>((resolve) => {
      this.wake = resolve;
      this.z.once('end', () => this.settle());
      this.z.end();
    });
    return this.take();
  }

  /** Frees the native compressor (idempotent). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    liveStreams--;
    this.z.destroy();
    this.settle();
  }

  /** AbortSignal listener: the client left. */
  handleEvent(): void {
    this.close();
  }

  private settle(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private take(): Buffer | null {
    if (this.error !== null) throw this.error;
    const out = this.out;
    if (this.closed || out.length === 0) return null;
    const chunk = out.length === 1 ? out[0]! : Buffer.concat(out);
    out.length = 0;
    return chunk;
  }
}
