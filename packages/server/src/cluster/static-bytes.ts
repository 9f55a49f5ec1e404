// Static files held once per cluster, not once per worker (serving/static/shared-bytes.ts).
// The primary keeps a registry of shared file bytes by key; a worker loading a file asks it:
// if another worker already made the bytes, it gets them (SharedArrayBuffer-backed views:
// posting them shares the memory, nothing is copied); if nobody has, it is told to make them
// (read, hash and compress), copies them into shared memory once and hands them to the registry;
// if another worker is making them right now, it waits for those. The registry holds what it
// was given until the cluster closes (with watch mode, replaced files' old bytes stay too).
import type { Rpc } from '../core/rpc.ts';
import type { ByteStore, LoadedBytes } from '../serving/static/shared-bytes.ts';

/** File bytes in shared memory, as they travel between threads. */
export interface SharedBytes {
  body: Uint8Array;
  hash: string;
  br: Uint8Array | undefined;
  gzip: Uint8Array | undefined;
}

/** One-way notes from a worker (the request for bytes is an Rpc request, 'bytes-get'). */
export type BytesNote = { type: 'bytes-put'; key: string; bytes: SharedBytes } | { type: 'bytes-failed'; key: string };

const toShared = (b: Buffer | undefined): Uint8Array | undefined => {
  if (b === undefined) return undefined;
  const view = new Uint8Array(new SharedArrayBuffer(b.length));
  view.set(b);
  return view;
};
const toBuffer = (v: Uint8Array | undefined): Buffer | undefined =>
  v === undefined ? undefined : Buffer.from(v.buffer, v.byteOffset, v.byteLength);

/** The worker side: a ByteStore that asks the primary. */
export class WorkerByteStore implements ByteStore {
  private readonly primary: Rpc;
  private readonly note: (message: BytesNote) => void;
  /** Files this worker loaded itself, and files it took from another worker. */
  readonly stats = { made: 0, shared: 0 };

  /** `primary`: this worker's requests to the primary (peer 0); `note` posts it a one-way note. */
  constructor(primary: Rpc, note: (message: BytesNote) => void) {
    this.primary = primary;
    this.note = note;
  }

  async intern(key: string, make: () => Promise<LoadedBytes>): Promise<LoadedBytes> {
    const found = (await this.primary.request(0, 'bytes-get', key)) as SharedBytes | undefined;
    if (found !== undefined) {
      this.stats.shared++;
      return { body: toBuffer(found.body)!, hash: found.hash, br: toBuffer(found.br), gzip: toBuffer(found.gzip) };
    }
    let made: LoadedBytes;
    try {
      made = await make();
    } catch (err) {
      this.note({ type: 'bytes-failed', key });
      throw err;
    }
    this.stats.made++;
    const shared: SharedBytes = { body: toShared(made.body)!, hash: made.hash, br: toShared(made.br), gzip: toShared(made.gzip) };
    this.note({ type: 'bytes-put', key, bytes: shared });
    return { body: toBuffer(shared.body)!, hash: shared.hash, br: toBuffer(shared.br), gzip: toBuffer(shared.gzip) };
  }
}

interface Waiter {
  readonly worker: number;
  /** Undefined: make the bytes yourself. */
  readonly answer: (bytes: SharedBytes | undefined) => void;
}

/** The primary side: shared bytes by key, and who is making which. */
export class ByteRegistry {
  private readonly made = new Map<string, SharedBytes>();
  /** Keys being made: by which worker, and who waits for them. */
  private readonly making = new Map<string, { by: number; waiting: Waiter[] }>();

  /** Answers each worker's 'bytes-get' (`rpc`: the primary's requests with that worker). */
  serve(rpc: Rpc): void {
    rpc.handle('bytes-get', (key: string, worker: number) => this.get(worker, key));
  }

  /** The bytes of `key`, at once or once another worker made them; undefined: `worker` makes them. */
  get(worker: number, key: string): SharedBytes | undefined | Promise<SharedBytes | undefined> {
    const bytes = this.made.get(key);
    if (bytes !== undefined) return bytes;
    const job = this.making.get(key);
    if (job === undefined) {
      this.making.set(key, { by: worker, waiting: [] });
      return undefined;
    }
    return new Promise((answer) => job.waiting.push({ worker, answer }));
  }

  note(message: BytesNote): void {
    if (message.type === 'bytes-put') {
      this.made.set(message.key, message.bytes);
      const job = this.making.get(message.key);
      this.making.delete(message.key);
      for (const w of job?.waiting ?? []) w.answer(message.bytes);
    } else this.handOver(message.key);
  }

  /** A worker is gone: what it was making passes to one of those waiting for it. */
  forget(worker: number): void {
    for (const [key, job] of this.making) {
      job.waiting = job.waiting.filter((w) => w.worker !== worker); // never answered: its replacement asks anew
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
      next.answer(undefined);
    }
  }
}
