// Request framing checks that uWebSockets.js 20.57 leaves to us. Its parser takes the first
// of several Content-Length headers and reads any Transfer-Encoding as chunked; a front proxy
// may read the same bytes differently (the other Content-Length, or "not chunked"), and the
// difference lets a request hide inside another one's body (request smuggling). So a request
// whose framing two parsers could disagree on is refused before any handler runs: 400, and
// the connection closed, and nothing parsed after it on that connection runs.
import type { UwsRequest, UwsResponse } from '../uws/index.ts';
import type { Logger } from '../app/logger.ts';

const DIGITS = /^\d{1,15}$/;

// forEach needs a callback: one module-level function and counters instead of a closure.
let contentLengths = 0;
let transferEncodings = 0;
function countFramingHeaders(key: string): void {
  if (key === 'content-length') contentLengths++;
  else if (key === 'transfer-encoding') transferEncodings++;
}

/**
 * Why this request's framing is ambiguous, or null when it is fine. Costs two header lookups
 * for requests that carry neither header (most GETs), one header walk when they do.
 */
export function framingProblem(ureq: UwsRequest): string | null {
  const cl = ureq.getHeader('content-length');
  const te = ureq.getHeader('transfer-encoding');
  if (cl === '' && te === '') return null;
  if (cl !== '' && te !== '') return 'both Content-Length and Transfer-Encoding';
  if (cl !== '' && !DIGITS.test(cl)) return 'a Content-Length that is not a single number';
  if (te !== '' && te.toLowerCase() !== 'chunked') return 'a Transfer-Encoding other than "chunked"';
  contentLengths = 0;
  transferEncodings = 0;
  ureq.forEach(countFramingHeaders);
  if (contentLengths > 1) return 'repeated Content-Length headers';
  if (transferEncodings > 1) return 'repeated Transfer-Encoding headers';
  return null;
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
  logger.warn({ method: ureq.getCaseSensitiveMethod(), url: ureq.getUrl(), problem }, 'refused a request with ambiguous framing; closing the connection');
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
