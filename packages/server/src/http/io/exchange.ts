// What the framework does to a Request and its Response beyond their public API, named once:
// the lifecycle modules of src/http/ (compile-route, chain, validate-step, send-value,
// route-context, tracker, the access log) and the WebSocket upgrade (realtime/upgrade.ts,
// which makes its own pair) go through these functions, never through a `_` member, so the
// members stay private to src/http/io/ (test/architecture/private-members.test.ts).
//
// Each function is one property access or one method call: they run per request, and V8
// inlines them. None allocates. Internal: none is exported from the package.
// The module binding, not the global: \`performance\` on globalThis is an accessor, which V8
// looks up through a global-load stub on every call (about 300 instructions per timed request).
import { performance } from 'node:perf_hooks';
import type { Logger } from '../../core/logger.ts';
import type { UwsResponse } from '../../uws/index.ts';
import type { SharedResponse } from '../dedup.ts';
import type { BodyReader } from './body.ts';
import type { Request } from './request.ts';
import type { ResponseCore } from './response-core.ts';
import type { Body } from './response-states.ts';
import type { Response } from './response.ts';

// ----- the steps of a request's life -------------------------------------------------

/** Pairs a response with its request (created after it, from it). @internal */
export function pair(req: Request<any>, res: ResponseCore): void {
  res._bind(req);
}

/** Starts the clock for the duration an onResponse hook is given (only when one wants it). @internal */
export function startTiming(res: ResponseCore): void {
  res._t0 = performance.now();
}

/** The uWS callback is returning: writes from now on are corked. @internal */
export function leaveCallback(res: ResponseCore): void {
  res._leaveCallback();
}

/** True while the uWS callback that made `res` is still running. @internal */
export function inCallback(res: ResponseCore): boolean {
  return res._sync;
}

/** Copies what is still needed from the uWS request, which dies with the callback. @internal */
export function snapshot(req: Request<any>): void {
  req._snapshot();
}

/** uWS onAborted: the client left. The response settles as aborted, `req.signal` aborts. @internal */
export function clientLeft(res: ResponseCore): void {
  res._abort();
}

/**
 * The handler goes asynchronous: copy what is still needed from the uWS request (it dies with
 * the callback), leave the callback, and settle the response as aborted if the client leaves.
 * @internal
 */
export function continueAsync(req: Request<any>, res: ResponseCore, ures: UwsResponse): void {
  req._snapshot();
  res._leaveCallback();
  ures.onAborted(() => res._abort());
}

/**
 * Starts the request timeout clock (`ms`). `chain`: what the route's chain returned, so the
 * timeout's log line can say whether the handler's promise was still pending. @internal
 */
export function startDeadline(res: ResponseCore, ms: number, chain: Promise<void> | undefined): void {
  res._startDeadline(ms, chain);
}

/** The timeout sweep (`now`: Date.now()): past its deadline and unanswered, the request fails with 503. @internal */
export function expireIfDue(res: ResponseCore, now: number): void {
  res._expireIfDue(now);
}

/** The server is shutting down: a streamed response is ended cleanly, `req.signal` aborts. @internal */
export function shutDown(res: ResponseCore): void {
  res._shutDown();
}

/** The connection was upgraded to a WebSocket: the HTTP response must never be touched again. @internal */
export function handOver(res: ResponseCore): void {
  res._handOver();
}

/** This response's index in the in-flight tracker's list, -1 when not tracked (http/tracker.ts). @internal */
export function inflightAt(res: ResponseCore): number {
  return res._inflightAt;
}

/** Records where the in-flight tracker holds this response (-1: released). @internal */
export function setInflightAt(res: ResponseCore, at: number): void {
  res._inflightAt = at;
}

// ----- what a settled response reports -----------------------------------------------

/** The request a response answers. @internal */
export function requestOf(res: ResponseCore): Request<any> {
  return res._req as Request<any>;
}

/** Body bytes written, counted once startTiming() ran (else 0). @internal */
export function bytesWritten(res: ResponseCore): number {
  return res._bytes;
}

/** Milliseconds since startTiming(). @internal */
export function elapsed(res: ResponseCore): number {
  return performance.now() - res._t0;
}

// ----- the answer --------------------------------------------------------------------

/** Writes the final body, after the route's onSend hooks: shared with a dedup group, compressed when it pays. @internal */
export function finishEnd(res: Response, body: Body | undefined): void {
  res._finishEnd(body);
}

/** Ends with `status`, the prepared header lines `headers` (name, value, …) and `body`, replacing what was set. @internal */
export function finishWith(res: Response, status: number, headers: readonly string[], body: Body): void {
  res._adoptHeaders(status, headers);
  res._finishEnd(body);
}

/** A write after the response was answered: throws in development, logged in production (see ResponseCore._late). @internal */
export function reportLate(res: ResponseCore, what: string): void {
  res._late(what);
}

/** This response leads a deduplicated group under `key`: its answer is shared with the group. @internal */
export function leadDedup(res: ResponseCore, key: string): void {
  res._leadDedup(key);
}

/** True while this response leads a deduplicated group. @internal */
export function leadsDedup(res: ResponseCore): boolean {
  return res._dedupKey !== null;
}

/** A follower of a deduplicated group answers with the leader's response. @internal */
export function replay(res: Response, shared: SharedResponse): void {
  res._replay(shared);
}

// ----- the request -------------------------------------------------------------------

/** Stores a validated value where the request's getter returns it (the route's validation step). @internal */
export function setValidated(req: Request<any>, target: 'params' | 'query' | 'headers' | 'cookies' | 'body', value: unknown): void {
  req._setValidated(target, value);
}

/** The request's body reader, attached now if still in the callback; null when there is no body. @internal */
export function bodyReader(req: Request<any>): BodyReader | null {
  return req._bodyReader();
}

/** Where the framework logs about this request: `req.log` with request ids on, the app's logger otherwise. @internal */
export function logFor(req: Request<any>): Logger {
  return req._log();
}

/**
 * One line about `req` (the access log's): through `req.log` when the request made one,
 * otherwise through the app's logger with `reqId` set in `fields` — the same line without a
 * child logger per request (pino's child() costs about a microsecond) and without copying the
 * fields. The id is included when request ids are on, or when the request made one. @internal
 */
export function logAbout(req: Request<any>, level: 'info' | 'debug', fields: { reqId: string | undefined }, msg: string): void {
  const bound = req._logger;
  if (bound !== undefined) return bound[level](fields, msg);
  const settings = req._settings;
  if (settings.requestId !== null || req._id !== undefined) fields.reqId = req.id;
  settings.logger[level](fields, msg);
}
