// Request bodies: uWS delivers chunks through onData, which must be attached while the
// request callback is still running. The reader buffers them with a limit and pauses the
// socket when nobody is consuming (backpressure for large uploads).
import { HttpError } from '../errors.ts';
import type { UwsResponse } from '../../uws/index.ts';

const HIGH_WATER = 64 * 1024;

export class ClientAbortError extends Error {
  constructor() {
    super('Client closed the connection');
    this.name = 'ClientAbortError';
  }
}

export class BodyReader {
  readonly limit: number;
  private uws: UwsResponse | null;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private received = 0;
  private isEnded = false;
  private paused = false;
  private collecting = false;
  private failure: Error | null = null;
  private wake: (() => void) | null = null;
  private whole: Buffer | null = null;
  private pendingWhole: Promise<Buffer> | null = null;
  private settleWhole: ((err: Error | null) => void) | null = null;

  constructor(uws: UwsResponse, limit: number, declaredLength: number) {
    this.uws = uws;
    this.limit = limit;
    if (declaredLength > limit) this.failure = tooLarge(limit);
    uws.onData((chunk, isLast) => this.push(chunk, isLast));
  }

  /** Why reading stopped (the body grew past the limit, the client aborted), or null. */
  get error(): Error | null {
    return this.failure;
  }

  /** True once the last byte of the body has arrived: the connection can be reused. */
  get ended(): boolean {
    return this.isEnded;
  }

  private push(chunk: ArrayBuffer, isLast: boolean): void {
    if (isLast) this.isEnded = true;
    if (this.failure) return; // keep draining the socket, drop the bytes
    const n = chunk.byteLength;
    this.received += n;
    if (this.received > this.limit) {
      this.fail(tooLarge(this.limit));
      return;
    }
    // The ArrayBuffer is only valid during this callback: copy it out.
    if (n > 0) {
      this.chunks.push(Buffer.copyBytesFrom(new Uint8Array(chunk)));
      this.buffered += n;
    }
    if (!this.collecting && !this.isEnded && this.buffered > HIGH_WATER) this.setPaused(true);
    this.notify();
  }

  private notify(): void {
    const settle = this.settleWhole;
    if (settle !== null && (this.isEnded || this.failure)) {
      this.settleWhole = null;
      settle(this.failure);
    }
    const wake = this.wake;
    if (wake) {
      this.wake = null;
      wake();
    }
  }

  private setPaused(paused: boolean): void {
    if (this.paused === paused || this.uws === null) return;
    this.paused = paused;
    if (paused) this.uws.pause();
    else this.uws.resume();
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    this.chunks = [];
    this.buffered = 0;
    this.setPaused(false);
    this.notify();
  }

  /** The response ended or the client left: never touch the uWS response again. */
  detach(aborted: boolean): void {
    this.uws = null;
    if (aborted) this.fail(new ClientAbortError());
  }

  private waitForData(): Promise<void> {
    return new Promise((resolve) => (this.wake = resolve));
  }

  /**
   * The whole body, read once and cached so validation and `req.text()` can both see it.
   * One promise per body, settled from the data callback (no async loop: this is the POST
   * hot path).
   */
  collect(): Promise<Buffer> {
    if (this.whole) return Promise.resolve(this.whole);
    if (this.failure) return Promise.reject(this.failure);
    if (this.isEnded) return Promise.resolve(this.join());
    this.collecting = true;
    this.setPaused(false);
    return (this.pendingWhole ??= new Promise<Buffer>((resolve, reject) => {
      this.settleWhole = (err) => (err ? reject(err) : resolve(this.join()));
    }));
  }

  private join(): Buffer {
    if (this.whole) return this.whole;
    const chunks = this.chunks;
    this.whole = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.buffered);
    this.chunks = [];
    return this.whole;
  }

  /** Chunks as they arrive; the socket is paused while the consumer is busy. */
  async *chunksAsTheyArrive(): AsyncGenerator<Buffer, void, undefined> {
    if (this.whole) {
      yield this.whole;
      return;
    }
    for (;;) {
      if (this.failure) throw this.failure;
      const chunk = this.chunks.shift();
      if (chunk) {
        this.buffered -= chunk.length;
        if (this.buffered <= HIGH_WATER) this.setPaused(false);
        yield chunk;
        continue;
      }
      if (this.isEnded) return;
      this.setPaused(false);
      await this.waitForData();
    }
  }
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, `Request body exceeds the limit of ${limit} bytes`);
}

/** Classifies a Content-Type header value into the kinds of body we parse. */
export function bodyKind(contentType: string): 'json' | 'urlencoded' | 'multipart' | 'text' | 'other' {
  if (contentType === 'application/json') return 'json'; // the common case, without the slicing below
  const semi = contentType.indexOf(';');
  const type = (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  if (type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'))) return 'json';
  if (type === 'application/x-www-form-urlencoded') return 'urlencoded';
  if (type === 'multipart/form-data') return 'multipart';
  if (type.startsWith('text/')) return 'text';
  return 'other';
}

/**
 * JSON.parse with a 400 for malformed input. Like Fastify, bodies that carry a
 * `__proto__` key or `constructor.prototype` are refused: merged into an object later
 * (Object.assign, spread into defaults) they would change its prototype.
 */
export function parseJson(buf: Buffer): unknown {
  if (buf.length === 0) throw new HttpError(400, 'Request body is empty; expected JSON');
  const text = buf.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, `Malformed JSON in request body: ${(err as Error).message}`, { cause: err });
  }
  // The walk over the parsed keys only runs when such a key could be there. Both forbidden
  // shapes need "proto" in a key (`__proto__`, `constructor.prototype`), spelt out or hidden
  // behind \u escapes (JSON.parse decodes "\u005f_proto__"; no other JSON escape makes a
  // letter): two scans of the text, a third of what searching for each key costs (the
  // realistic POST benchmark's 1 KB body, bench/README.md).
  if (text.includes('proto') || text.includes('\\u')) rejectPoisonedKeys(value);
  return value;
}

/** Deeper JSON than this is refused (400) when the key walk runs: no real payload nests so far. */
export const MAX_JSON_DEPTH = 512;

/**
 * Walks the parsed value with an explicit stack, not recursion: a body nested 100,000 deep
 * would overflow the call stack (a 500 and an error log per request instead of a 400).
 */
function rejectPoisonedKeys(root: unknown): void {
  const values: unknown[] = [root];
  const depths: number[] = [0];
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= MAX_JSON_DEPTH) throw new HttpError(400, `JSON body nested deeper than ${MAX_JSON_DEPTH} levels`);
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        values.push(value[i]);
        depths.push(depth + 1);
      }
      continue;
    }
    if (Object.hasOwn(value, '__proto__')) throw new HttpError(400, 'Forbidden key "__proto__" in JSON body');
    const ctor = (value as Record<string, unknown>).constructor;
    if (Object.hasOwn(value, 'constructor') && typeof ctor === 'object' && ctor !== null && Object.hasOwn(ctor, 'prototype')) {
      throw new HttpError(400, 'Forbidden key "constructor.prototype" in JSON body');
    }
    for (const key of Object.keys(value)) {
      values.push((value as Record<string, unknown>)[key]);
      depths.push(depth + 1);
    }
  }
}
