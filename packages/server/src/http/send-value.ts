// What a handler returns becomes the response: strings, bytes, a web Response (streamed, or
// buffered up to 512 KiB for a deduplicated leader), anything else as JSON.
import type { Request } from './io/request.ts';
import type { Response } from './io/response.ts';
import { MAX_SHARED_BODY } from './dedup.ts';
import { EventStream } from './io/sse.ts';
import { leadsDedup, reportLate } from './io/exchange.ts';

/** Where a failure while sending goes (the route's error path). */
export interface FailureSink {
  fail(err: unknown, req: Request<any>, res: Response): void;
}

export function isPromise(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

export function sendValue(value: unknown, req: Request<any>, res: Response, route: FailureSink): void {
  try {
    if (res.headersSent || res.finished) {
      // `res.json(a); return b`: b is lost. Misuse, reported like a second res.json()
      // (returning `res` or the `res.sse()` stream is fine: they are the answer).
      if (value !== res && !(value instanceof EventStream)) reportLate(res, 'a value returned by the handler');
      return;
    }
    if (typeof value === 'string') res.send(value);
    else if (value instanceof Uint8Array || value instanceof ArrayBuffer) res.send(value);
    else if (value instanceof globalThis.Response) sendWebResponse(value, res, route, req);
    else res.json(value);
  } catch (err) {
    route.fail(err, req, res);
  }
}

function sendWebResponse(web: globalThis.Response, res: Response, route: FailureSink, req: Request<any>): void {
  res.status(web.status);
  // Iteration yields each Set-Cookie on its own (fetch's "sort and combine"); `res` as
  // `this` keeps the callback a module-level function, not a closure per response.
  web.headers.forEach(appendWebHeader, res);
  const body = web.body;
  if (body === null) res.end();
  else if (leadsDedup(res)) bufferThenSend(body, res, shutdownOf(web.headers)).catch((err) => route.fail(err, req, res));
  else sendWebBody(body, req, res, web.headers).catch((err) => route.fail(err, req, res));
}

/**
 * A web Response body is a document that ends (a page streaming its `load` promises, a
 * download): a graceful shutdown lets it finish, as Node's server.close() does. An event
 * stream never ends: shutdown ends it cleanly, and its clients reconnect elsewhere.
 */
function shutdownOf(headers: Headers): 'end' | 'finish' {
  return headers.get('content-type')?.startsWith('text/event-stream') === true ? 'end' : 'finish';
}

function appendWebHeader(this: Response, value: string, name: string): void {
  this.appendHeader(name, value);
}

/** Resolves on the next macrotask: "the stream had nothing more to give right away". */
const nextTurn = (): Promise<typeof STALLED> => new Promise((resolve) => setImmediate(resolve, STALLED));

/**
 * A web body that is complete at once (`new Response(string)`, SvelteKit's pages and
 * endpoints) leaves as one `end(bytes)`: Content-Length, one corked write, no chunked
 * framing. Anything still producing after the first chunk is streamed, the first chunk
 * without waiting for the next.
 *
 * Why a body made from a string or bytes is read through its stream too: undici builds that
 * stream in the Response constructor (the handler has paid for it already) and keeps the
 * source in private state, and `response.bytes()` reads the same stream with undici's own
 * reader. Counted (bench/instructions.mjs --annotate, tachyon-mount peer, realistic GET,
 * 2026-11-27): the reads here (this function, the reader, the byte stream's enqueue) are about
 * 2,000 to 3,000 of the 93,000 instructions of a request; the Response's construction
 * (webidl, headers, the stream) is several times that, and no reading order removes it.
 */
async function sendWebBody(body: ReadableStream<Uint8Array>, req: Request<any>, res: Response, headers: Headers): Promise<void> {
  const reader = body.getReader();
  const first = await reader.read();
  if (first.done) {
    res.end();
    return;
  }
  const pending = reader.read();
  // A closed stream answers at once: that settles it without scheduling a macrotask.
  let second = await Promise.race([pending, NOW]);
  if (second === STALLED) second = await Promise.race([pending, nextTurn()]);
  if (second !== STALLED && second.done) {
    res.end(first.value);
    return;
  }
  const declared = headers.get('content-length');
  const length = declared !== null && /^\d{1,15}$/.test(declared) ? Number(declared) : undefined;
  // A client that leaves while the source is waiting cancels it now, not at its next chunk.
  const cancel = () => void reader.cancel().catch(() => {});
  req.signal.addEventListener('abort', cancel, { once: true });
  await res.stream(
    (async function* () {
      try {
        yield first.value;
        const next = second === STALLED ? await pending : second;
        if (next.done) return;
        yield next.value;
        for (let r = await reader.read(); !r.done; r = await reader.read()) yield r.value;
      } finally {
        // The client left (or the stream ended): let the source know, so it stops producing.
        req.signal.removeEventListener('abort', cancel);
        reader.cancel().catch(() => {});
      }
    })(),
    { length, shutdown: shutdownOf(headers) },
  );
}

/**
 * Milliseconds a deduplicated leader waits for a streamed body to end before it treats it
 * as live (SvelteKit's streamed `load` promises, server-sent progress): a live body is
 * streamed to the leader's client as it comes instead of being held back, and not shared.
 */
const LIVE_STREAM_MS = 10;
const STALLED = Symbol('stalled');
/** Loses a race to any promise already settled when the race starts. */
const NOW = Promise.resolve(STALLED);

/**
 * A deduplicated leader reads up to 512 KiB of a streamed body so it can be shared; past
 * that, or when the body is still open after LIVE_STREAM_MS, it streams (not shared).
 */
async function bufferThenSend(body: ReadableStream<Uint8Array>, res: Response, shutdown: 'end' | 'finish'): Promise<void> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: NodeJS.Timeout | undefined;
  // Armed only when a read does not answer at once: a body complete from the start costs no timer.
  let stalled: Promise<typeof STALLED> | undefined;
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  try {
    for (;;) {
      pending = reader.read();
      let r = await Promise.race([pending, NOW]);
      if (r === STALLED)
        r = await Promise.race([pending, (stalled ??= new Promise((resolve) => (timer = setTimeout(resolve, LIVE_STREAM_MS, STALLED))))]);
      if (r === STALLED) break; // live: `pending` carries on in the stream below
      pending = undefined;
      if (r.done) {
        res.end(Buffer.concat(chunks, size));
        return;
      }
      chunks.push(r.value);
      size += r.value.byteLength;
      if (size > MAX_SHARED_BODY) break;
    }
  } finally {
    clearTimeout(timer);
  }
  const waiting = pending;
  await res.stream(
    (async function* () {
      try {
        yield* chunks;
        if (waiting !== undefined) {
          const first = await waiting;
          if (first.done) return;
          yield first.value;
        }
        for (let r = await reader.read(); !r.done; r = await reader.read()) yield r.value;
      } finally {
        reader.cancel().catch(() => {});
      }
    })(),
    { shutdown },
  );
}
