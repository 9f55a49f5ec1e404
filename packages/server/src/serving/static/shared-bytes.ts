// Where the bytes of loaded files come from. By default each file table keeps its own
// Buffers. In a cluster worker, the cluster installs a store that shares them between the
// worker threads (cluster/static-bytes.ts): the first worker to load a file (same real path,
// inode, size and modification time, same variants) reads and compresses it and copies the
// results into shared memory; the other workers, without reading it, serve those same bytes (uWS sends from shared memory as from any
// Buffer). Without it, N workers hold N copies and compress every file N times.

export interface LoadedBytes {
  body: Buffer;
  /** The body's validator (a short sha1). */
  hash: string;
  br: Buffer | undefined;
  gzip: Buffer | undefined;
}

export interface ByteStore {
  /** The bytes for `key`: someone else's if already made, else `make()`'s (then shared). */
  intern(key: string, make: () => Promise<LoadedBytes>): Promise<LoadedBytes>;
}

let store: ByteStore | undefined;

/** @internal Set once by a cluster worker, before its factory runs. */
export function installByteStore(next: ByteStore): void {
  store = next;
}

export function internBytes(key: string, make: () => Promise<LoadedBytes>): Promise<LoadedBytes> {
  return store === undefined ? make() : store.intern(key, make);
}
