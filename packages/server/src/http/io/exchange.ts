// The steps of a request's life, for a uWS handler built outside src/http/ that makes its own
// Request and Response (the WebSocket upgrade, realtime/upgrade.ts): pair them, leave the
// uWS callback, carry on asynchronously, hand the connection over. The routes' own lifecycle
// (compile-route.ts) drives the same steps.
import type { UwsResponse } from '../../uws/index.ts';
import type { Request } from './request.ts';
import type { Response } from './response.ts';

/** Pairs a response with its request (created after it, from it). */
export function pair(req: Request<any>, res: Response): void {
  res._bind(req);
}

/** The uWS callback is returning: writes from now on are corked. */
export function leaveCallback(res: Response): void {
  res._leaveCallback();
}

/**
 * The handler goes asynchronous: copy what is still needed from the uWS request (it dies with
 * the callback), leave the callback, and settle the response as aborted if the client leaves.
 */
export function continueAsync(req: Request<any>, res: Response, ures: UwsResponse): void {
  req._snapshot();
  res._leaveCallback();
  ures.onAborted(() => res._abort());
}

/** The connection was upgraded to a WebSocket: the HTTP response must never be touched again. */
export function handOver(res: Response): void {
  res._handOver();
}
