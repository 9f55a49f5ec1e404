// Settings of every brotli and gzip compressor Tachyon creates, in one place. Three uses,
// three trade-offs:
// - precompression of static files, once at load time: the smallest output is worth the
//   CPU (brotli quality 11, gzip level 9);
// - dynamic bodies compressed whole (sync or in the thread pool): the route's configured
//   quality/level, with the body size as a hint;
// - streamed bodies, compressed chunk by chunk for as long as the stream lives: the
//   compressor's memory is held all that time (brotli's default 4 MiB window grows to
//   ≈ 6 MB per stream, ≈ 9 MB at higher qualities), so streams get a 256 KiB window
//   (lgwin 18) and at most quality 4 (higher qualities allocate larger hash tables).
import { constants as zc, type BrotliOptions, type ZlibOptions } from 'node:zlib';

/** Brotli quality 11 runs at ~1 MB/s: precompressed files above this size get quality 9, still smaller than gzip -9. */
const PRECOMPRESS_MAX_QUALITY_SIZE = 256 * 1024;

/** Precompression of one static file of `size` bytes (`text`: a text-like content type). */
export function precompressBrotliOptions(size: number, text: boolean): BrotliOptions {
  return {
    params: {
      [zc.BROTLI_PARAM_QUALITY]: size <= PRECOMPRESS_MAX_QUALITY_SIZE ? 11 : 9,
      [zc.BROTLI_PARAM_MODE]: text ? zc.BROTLI_MODE_TEXT : zc.BROTLI_MODE_GENERIC,
      [zc.BROTLI_PARAM_SIZE_HINT]: size,
    },
  };
}

export const PRECOMPRESS_GZIP_OPTIONS: ZlibOptions = { level: 9 };

/** A dynamic body of `size` bytes, compressed whole. */
export function dynamicBrotliOptions(quality: number, size: number): BrotliOptions {
  return {
    params: {
      [zc.BROTLI_PARAM_QUALITY]: quality,
      [zc.BROTLI_PARAM_MODE]: zc.BROTLI_MODE_TEXT,
      [zc.BROTLI_PARAM_SIZE_HINT]: size,
    },
  };
}

export const STREAM_BROTLI_MAX_QUALITY = 4;
export const STREAM_BROTLI_WINDOW_BITS = 18;

/** A streamed body. */
export function streamBrotliOptions(quality: number): BrotliOptions {
  return {
    params: {
      [zc.BROTLI_PARAM_QUALITY]: Math.min(quality, STREAM_BROTLI_MAX_QUALITY),
      [zc.BROTLI_PARAM_LGWIN]: STREAM_BROTLI_WINDOW_BITS,
      [zc.BROTLI_PARAM_MODE]: zc.BROTLI_MODE_TEXT,
    },
  };
}

/** A streamed body: deflate's own window is already small (32 KiB; ≈ 256 KB of state at memLevel 8). */
export function streamGzipOptions(level: number): ZlibOptions {
  return { level };
}

export function gzipOptions(level: number): ZlibOptions {
  return { level };
}
