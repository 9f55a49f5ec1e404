// Static files held once per cluster, not once per worker (serving/static/shared-bytes.ts).
// The primary keeps a registry of shared file bytes by key; a worker loading a file asks it:
// if another worker already made the bytes, it gets them (SharedArrayBuffer-backed views:
// posting them shares the memory, nothing is copied); if nobody has, it is told to make them
// (read, hash and compress), copies them into shared memory once and hands them to the registry;
// if another worker is making them right now, it waits for those. The registry holds what it
// was given until the cluster closes (with watch mode, replaced files' old bytes stay too).
import type { ByteStore, LoadedBytes } from '../serving/static/shared-bytes.ts';

/** File bytes in shared memory, as they travel between threads. */
export interface SharedBytes {
  body: Uint8Array;
  hash: string;
  br: Uint8Array | undefined;
  gzip: Uint8Array | undefined;
}

export type BytesRequest = { type: 'bytes-get'; ref: number; key: string } | { type: 'bytes-put'; key: string; bytes: SharedBytes } | { type: 'bytes-failed'; key: string };
export type BytesReply = { type: 'bytes'; ref: number; bytes: SharedBytes | undefined };

const toShared = (b: Buffer | undefined): Uint8Array | undefined => {
  if (b === undefined) return undefined;
  const view = new Uint8Array(new SharedArrayBuffer(b.length));
  view.set(b);
  return view;
};
const toBuffer = (v: Uint8Array | undefined): Buffer | undefined => (v === undefined ? undefined : Buffer.from(v.buffer, v.byteOffset, v.byteLength));

/** The worker side: a ByteStore that asks the primary. */
export class WorkerByteStore implements ByteStore {
  private nextRef = 1;
  private readonly pending = new Map<number, (bytes: SharedBytes | undefined) => void>();
  private readonly post: (message: BytesRequest) => void;
  /** Files this worker loaded itself, and files it took from another worker. */
  readonly stats = { made: 0, shared: 0 };

  constructor(post: (message: BytesRequest) => void) {
    this.post = post;
  }

  /** A reply from the primary. */
  reply(message: BytesReply): void {
    const resolve = this.pending.get(message.ref);
    this.pending.delete(message.ref);
    resolve?.(message.bytes);
  }

  async intern(key: string, make: () => Promise<LoadedBytes>): Promise<LoadedBytes> {
    const ref = this.nextRef++;
    const found = await new Promise<SharedBytes | undefined>((resolve) => {
      this.pending.set(ref, resolve);
      this.post({ type: 'bytes-get', ref, key });
    });
    if (found !== undefined) {
      this.stats.shared++;
      return { body: toBuffer(found.body)!, hash: found.hash, br: toBuffer(found.br), gzip: toBuffer(found.gzip) };
    }
    let made: LoadedBytes;
    try {
      made = await make();
    } catch (err) {
      this.post({ type: 'bytes-failed', key });
      throw err;
    }
    this.stats.made++;
    const shared: SharedBytes = { body: toShared(made.body)!, hash: made.hash, br: toShared(made.br), gzip: toShared(made.gzip) };
    this.post({ type: 'bytes-put', key, bytes: shared });
    return { body: toBuffer(shared.body)!, hash: shared.hash, br: toBuffer(shared.br), gzip: toBuffer(shared.gzip) };
  }
}

interface Waiter {
  worker: number;
  ref: number;
}

/** The primary side: shared bytes by key, and who is making which. */
export class ByteRegistry {
  private readonly made = new Map<string, SharedBytes>();
  /** Keys being made: by which worker, and who waits for them. */
  private readonly making = new Map<string, { by: number; waiting: Waiter[] }>();
  private readonly send: (worker: number, reply: BytesReply) => void;

  constructor(send: (worker: number, reply: BytesReply) => void) {
    this.send = send;
  }

  handle(worker: number, message: BytesRequest): void {
    if (message.type === 'bytes-get') {
      const bytes = this.made.get(message.key);
      if (bytes !== undefined) return this.send(worker, { type: 'bytes', ref: message.ref, bytes });
      const job = this.making.get(message.key);
      if (job !== undefined) job.waiting.push({ worker, ref: message.ref });
      else {
        this.making.set(message.key, { by: worker, waiting: [] });
        this.send(worker, { type: 'bytes', ref: message.ref, bytes: undefined });
      }
    } else if (message.type === 'bytes-put') {
      this.made.set(message.key, message.bytes);
      const job = this.making.get(message.key);
      this.making.delete(message.key);
      for (const w of job?.waiting ?? []) this.send(w.worker, { type: 'bytes', ref: w.ref, bytes: message.bytes });
    } else this.handOver(message.key);
  }

  /** A worker is gone: what it was making passes to one of those waiting for it. */
  forget(worker: number): void {
    for (const [key, job] of this.making) {
      job.waiting = job.waiting.filter((w) => w.worker !== worker); // its replacement reuses the id, not the refs
      if (job.by === worker) this.handOver(key);
    }
  }

  private handOver(key: string): void {
    const job = this.making.get(key);
    if (job === undefined) return;
    const next = job.waiting.shift();
    if (next === undefined) this.making.delete(key);
    else {
      job.by = next.worker;
      this.send(next.worker, { type: 'bytes', ref: next.ref, bytes: undefined });
    }
  }
}
