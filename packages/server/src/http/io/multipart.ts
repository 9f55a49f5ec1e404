// Streaming multipart/form-data with busboy, for uploads too large to buffer: the body is
// fed to the parser chunk by chunk, and each file arrives as a Readable. When the app does
// not read a file, busboy stops taking input, we stop pulling the body, and the socket is
// paused: backpressure all the way to the client.
import busboy from 'busboy';
import type { Readable } from 'node:stream';
import { HttpError } from '../errors.ts';

export interface MultipartLimits {
  /** Largest file in bytes (413 past it). Default: the route's body limit. */
  fileSize?: number;
  /** Most files (413 past it). Default 10. */
  files?: number;
  /** Most non-file fields. Default 100. */
  fields?: number;
  /** Largest field value in bytes. Default 64 KiB. */
  fieldSize?: number;
}

export type MultipartPart =
  | { kind: 'field'; name: string; value: string }
  | { kind: 'file'; name: string; filename: string; type: string; stream: Readable };

/**
 * Yields fields and files in order. Read (or `resume()`) each file's stream before asking for
 * the next part: the parser waits for it.
 */
export async function* parseMultipart(
  contentType: string,
  body: AsyncIterable<Uint8Array>,
  limits: MultipartLimits,
  bodyLimit: number,
): AsyncGenerator<MultipartPart> {
  let bb: busboy.Busboy;
  try {
    bb = busboy({
      headers: { 'content-type': contentType },
      limits: {
        fileSize: limits.fileSize ?? bodyLimit,
        files: limits.files ?? 10,
        fields: limits.fields ?? 100,
        fieldSize: limits.fieldSize ?? 64 * 1024,
      },
    });
  } catch (err) {
    throw new HttpError(400, `Malformed multipart request: ${(err as Error).message}`, { cause: err });
  }
  const queue: MultipartPart[] = [];
  let failure: unknown = null;
  let finished = false;
  let wake: (() => void) | null = null;
  // The file being read: the app may be awaiting it (pipeline to disk) while the body fails.
  let current: Readable | null = null;
  const notify = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const fail = (err: unknown) => {
    if (failure !== null) return;
    failure = err;
    // A body failure (client abort, limit, malformed input) must reach whoever reads the open
    // file, or `await pipeline(part.stream, …)` waits forever with its file descriptor open.
    const open = current;
    current = null;
    if (open !== null && !open.readableEnded && !open.destroyed) open.destroy(err as Error);
    if (!finished) bb.destroy();
    notify();
  };
  bb.on('field', (name, value, info) => {
    if (info.valueTruncated) return fail(new HttpError(413, `Field ${name} is larger than the limit`));
    queue.push({ kind: 'field', name, value });
    notify();
  });
  bb.on('file', (name, stream, info) => {
    // An app that only resume()s a file must not crash the process when it is cut short:
    // readers still see the error through their own iteration or listeners.
    stream.on('error', () => {});
    // On a truncated or malformed body busboy destroys the open file's stream with its own
    // plain Error ("Unexpected end of form") before its 'error' reaches fail(): a reader's
    // `pipeline(part.stream, …)` would reject with a 500-making error where the iteration gets
    // the documented 400. So what busboy destroys it with while tearing down becomes that 400
    // (mapped before Node records it as the stream's error); an abort or a limit (an
    // HttpError, or fail() already ran) and the app's own destroy() pass unchanged.
    const destroy = stream.destroy;
    stream.destroy = function (this: Readable, err?: Error) {
      const own = err !== undefined && failure === null && !(err instanceof HttpError) && (bb.destroyed || bb.writableEnded);
      return destroy.call(this, own ? new HttpError(400, `Malformed multipart body: ${err.message}`, { cause: err }) : err);
    };
    stream.on('limit', () => {
      const err = new HttpError(413, `File ${info.filename} is larger than the limit`);
      stream.destroy(err);
      fail(err);
    });
    current = stream;
    stream.once('end', () => {
      if (current === stream) current = null;
    });
    queue.push({ kind: 'file', name, filename: info.filename ?? '', type: info.mimeType, stream });
    notify();
  });
  bb.on('filesLimit', () => fail(new HttpError(413, 'Too many files')));
  bb.on('fieldsLimit', () => fail(new HttpError(413, 'Too many fields')));
  bb.on('partsLimit', () => fail(new HttpError(413, 'Too many parts')));
  bb.on('error', (err) => fail(new HttpError(400, `Malformed multipart body: ${(err as Error).message}`, { cause: err })));
  bb.on('close', () => {
    finished = true;
    notify();
  });

  // Feed the parser in the background, honouring its backpressure.
  const feeding = (async () => {
    try {
      for await (const chunk of body) {
        if (failure !== null) return;
        if (!bb.write(chunk)) {
          if (failure !== null) return;
          await new Promise<void>((resolve) => {
            const done = () => (bb.off('drain', done), bb.off('close', done), resolve());
            bb.on('drain', done).on('close', done);
          });
        }
      }
      bb.end();
    } catch (err) {
      fail(err);
    }
  })();
  // The app may stop iterating early; the feeding loop then ends with the body.
  feeding.catch(() => {});

  try {
    for (;;) {
      if (failure !== null) throw failure;
      const part = queue.shift();
      if (part !== undefined) {
        yield part;
        continue;
      }
      if (finished) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    if (!finished) bb.destroy();
  }
}

/**
 * The boundary of a multipart Content-Type, or undefined when it has none. RFC 2046 allows
 * 1–70 characters, optionally quoted.
 */
export function multipartBoundary(contentType: string): string | undefined {
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  return m ? (m[1] ?? m[2]) : undefined;
}

/**
 * True when a buffered multipart body is complete: it carries the close delimiter
 * (`--boundary--`). uWS's parser returns the parts it found in a truncated or garbage body
 * (often none) without saying it stopped early, which would hand the app an empty or partial
 * form as if it were the whole one.
 */
export function hasCloseDelimiter(body: Uint8Array, boundary: string): boolean {
  const close = `--${boundary}--`;
  const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const at = buf.lastIndexOf(close, undefined, 'latin1');
  return at === 0 || (at > 1 && buf[at - 2] === 13 && buf[at - 1] === 10);
}
