// http/io/multipart.ts, the glue around busboy: for any body the parse ends (never hangs) with
// the parts or a 400/413 HttpError; no field value or file is larger than its limit, no more
// fields or files than allowed come out. multipartBoundary and hasCloseDelimiter never throw.
import { HttpError } from '../../packages/server/src/http/errors.ts';
import { hasCloseDelimiter, multipartBoundary, parseMultipart } from '../../packages/server/src/http/io/multipart.ts';
import { assert, onlyDocumented, timedAsync } from '../lib.mjs';

const LIMITS = { fileSize: 256, files: 3, fields: 5, fieldSize: 64 };
const BOUNDARY = 'XfuzzX';

async function* chunks(body, size) {
  for (let i = 0; i < body.length; i += size) yield body.subarray(i, i + size);
}

async function parse(contentType, body, size) {
  let fields = 0;
  let files = 0;
  for await (const part of parseMultipart(contentType, chunks(body, size), LIMITS, 1024)) {
    if (part.kind === 'field') {
      fields++;
      // Each received byte decodes to at most one UTF-16 unit (invalid UTF-8 becomes U+FFFD).
      assert(part.value.length <= LIMITS.fieldSize, `a field value within fieldSize (${part.value.length})`);
    } else {
      files++;
      let bytes = 0;
      try {
        for await (const c of part.stream) bytes += c.length;
      } catch (err) {
        onlyDocumented(err, [HttpError], (e) => e.status === 400 || e.status === 413);
      }
      assert(bytes <= LIMITS.fileSize, `a file within fileSize (${bytes})`);
    }
  }
  assert(fields <= LIMITS.fields && files <= LIMITS.files, `within the counts (${fields} fields, ${files} files)`);
}

export async function fuzz(data) {
  // First byte: the chunk size and whether the fuzzer picks the Content-Type (line one) too.
  const head = data.length > 0 ? data[0] : 0;
  let body = data.subarray(1);
  let contentType = `multipart/form-data; boundary=${BOUNDARY}`;
  if (head & 0x80) {
    const nl = body.indexOf(10);
    if (nl !== -1) {
      contentType = body.subarray(0, nl).toString('latin1');
      body = body.subarray(nl + 1);
    }
  }
  const boundary = multipartBoundary(contentType);
  assert(boundary === undefined || (boundary.length >= 1 && boundary.length <= 70), 'a boundary of 1-70 characters');
  if (boundary !== undefined) assert(typeof hasCloseDelimiter(body, boundary) === 'boolean', 'hasCloseDelimiter answers');
  try {
    await timedAsync('parseMultipart', () => parse(contentType, body, 1 + (head & 0x3f)));
  } catch (err) {
    onlyDocumented(err, [HttpError], (e) => e.status === 400 || e.status === 413);
  }
}
