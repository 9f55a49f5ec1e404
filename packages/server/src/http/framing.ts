// Request framing checks that uWebSockets.js 20.57 leaves to us. Its parser takes the first
// of several Content-Length headers and reads any Transfer-Encoding as chunked; a front proxy
// may read the same bytes differently (the other Content-Length, or "not chunked"), and the
// difference lets a request hide inside another one's body (request smuggling). So a request
// whose framing two parsers could disagree on is refused before any handler runs: 400, and
// the connection closed, and nothing parsed after it on that connection runs.
//
// uWS's getHeader returns only the first of repeated headers, so repeats are found in the
// collected header list, where headerIn() joins them with ", ": "0, 33" is not a number, and
// "chunked, chunked" is not "chunked". Requests without either header (most GETs) pay two
// header lookups; requests with one pay one walk over their headers, which they would pay
// anyway when they go async to read the body (the request keeps the list).
import type { UwsRequest, UwsResponse } from '../uws/index.ts';
import type { Logger } from '../core/logger.ts';
import { collectHeaderList, headerIn } from './io/request-headers.ts';
import { warnBadInput } from '../core/throttled-log.ts';

const DIGITS = /^\d{1,15}$/;
// The keys as bytes, made once: the addon reads a string key through a heap-allocated UTF-8
// copy on every call, a byte key in place. These two lookups run on every request. Plain
// ArrayBuffers, not Buffers: for a typed array the addon also asks V8 for its buffer, length
// and offset (about 120 instructions a lookup, counted with bench/instructions.mjs --annotate
// on the pipelined GET); an ArrayBuffer is its own backing store.
const CONTENT_LENGTH = new TextEncoder().encode('content-length').buffer;
const TRANSFER_ENCODING = new TextEncoder().encode('transfer-encoding').buffer;

/** The request's headers ([name, value, …]) when it declares a body (Content-Length or Transfer-Encoding), else undefined. */
export function headersOfFramedRequest(ureq: UwsRequest): string[] | undefined {
  if (ureq.getHeader(CONTENT_LENGTH) === '' && ureq.getHeader(TRANSFER_ENCODING) === '') return undefined;
  return collectHeaderList(ureq);
}

/** Why these headers ([name, value, …]) frame the body ambiguously, or null when they are fine. */
export function framingProblemIn(headers: readonly string[]): string | null {
  const cl = headerIn(headers, 'content-length');
  const te = headerIn(headers, 'transfer-encoding');
  if (cl !== undefined && te !== undefined) return 'both Content-Length and Transfer-Encoding';
  if (cl !== undefined && !DIGITS.test(cl))
    return cl.includes(',') ? 'repeated or listed Content-Length' : 'a Content-Length that is not a number';
  if (te !== undefined && te.toLowerCase() !== 'chunked')
    return te.includes(',') ? 'repeated or listed Transfer-Encoding' : 'a Transfer-Encoding other than "chunked"';
  return null;
}

/** Why this request's framing is ambiguous, or null when it is fine (for callers that do not keep the headers). */
export function framingProblem(ureq: UwsRequest): string | null {
  const headers = headersOfFramedRequest(ureq);
  return headers === undefined ? null : framingProblemIn(headers);
}

/**
 * Answers 400 and closes the connection. The answer is deliberately deferred by one turn:
 * uWS parses every request in a received buffer before it closes a connection, even one ended
 * with closeConnection, so a synchronous answer would let a request hidden behind this one
 * run. While this response is pending, uWS instead aborts the connection as soon as it parses
 * another request on it, so nothing after this one runs (the client then gets no 400, which
 * is fine for a smuggling attempt). A lone bad request gets its 400 on the next turn.
 */
export function refuseFraming(ures: UwsResponse, ureq: UwsRequest, problem: string, logger: Logger): void {
  warnBadInput(
    logger,
    { method: ureq.getCaseSensitiveMethod(), url: ureq.getUrl(), problem },
    'refused a request with ambiguous framing; closing the connection',
  );
  const refusal = new Refusal(ures, problem);
  ures.onAborted(() => refusal.abort()); // before going async
  setImmediate(() => refusal.answer());
}

class Refusal {
  private ures: UwsResponse | null;
  private readonly problem: string;
  constructor(ures: UwsResponse, problem: string) {
    this.ures = ures;
    this.problem = problem;
  }
  abort(): void {
    this.ures = null; // never touch an aborted response
  }
  answer(): void {
    const ures = this.ures;
    if (ures === null) return;
    this.ures = null;
    // Outside the uWS callback: cork the writes.
    ures.cork(() => {
      ures.writeStatus('400 Bad Request').writeHeader('content-type', 'application/json; charset=utf-8');
      ures.end(JSON.stringify({ error: `Bad Request: ${this.problem}` }), true);
    });
  }
}
