// What `res.stream()` accepts, read uniformly as an async iterable; and how to let go of it.
import { Readable } from 'node:stream';

export type StreamSource = ReadableStream<Uint8Array | string> | AsyncIterable<Uint8Array | string> | Readable;

export function toAsyncIterable(source: StreamSource): AsyncIterable<Uint8Array | string> {
  if (Symbol.asyncIterator in source) return source as AsyncIterable<Uint8Array | string>;
  // Older ReadableStream implementations without async iteration.
  const reader = (source as ReadableStream<Uint8Array | string>).getReader();
  return {
    async *[Symbol.asyncIterator]() {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          yield value;
        }
      } finally {
        reader.releaseLock();
      }
    },
  };
}

export function cancelSource(source: StreamSource): void {
  try {
    if (source instanceof Readable) source.destroy();
    else if (typeof (source as ReadableStream).cancel === 'function' && !(source as ReadableStream).locked)
      void (source as ReadableStream).cancel().catch(() => {});
  } catch {
    // already closed
  }
}
