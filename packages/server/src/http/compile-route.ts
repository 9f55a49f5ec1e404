// Request lifecycle, compiled once per route when the app starts:
//
//   uWS callback → Request/Response → onRequest → [app & router middleware] → preValidation
//     → validation → preHandler → [route middleware] → handler → returned value sent (onSend)
//     → (errors → onError → error handlers) → onResponse        (hooks: hooks.ts, docs/hooks.md)
//
// A chain is a nest of closures built at startup; per request the only allocations are
// the Request/Response pair and one `next` per middleware that runs. When the chain
// returns with the response still open, the request goes async: we snapshot the uWS
// request, register onAborted and start the timeout clock, all before uWS regains control.
//
// The steps live beside this file: chain.ts (composition, next), validate-step.ts,
// send-value.ts (returned values), route-context.ts (per-route state, error handlers).
import { decodeComponent } from './io/query.ts';
import type { Stringify } from './io/response-states.ts';
import { clientLeft, leaveCallback, pair, snapshot, startDeadline, startTiming } from './io/exchange.ts';
import type { Request } from './io/request.ts';
import type { Response } from './io/response.ts';
import type { Settings } from '../core/settings.ts';
import type { BodyKind, ErrorHandler, Handler } from './types.ts';
import type { Pattern } from '../core/path.ts';
import type { UwsHandler, UwsRequest, UwsResponse } from '../uws/index.ts';
import type { Compression } from './compression.ts';
import type { DedupTable } from './dedup.ts';
import type { Schema } from './validation.ts';
import { framingProblemIn, headersOfFramedRequest, refuseFraming } from './framing.ts';
import { composeChain } from './chain.ts';
import { CompiledRoute, type Tracker } from './route-context.ts';
import type { HookLists } from './hooks.ts';

export { defaultErrorHandler } from './route-context.ts';

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

export interface RouteSpec {
  /** Upper-case method, or null for `any`. */
  method: string | null;
  pattern: Pattern;
  /** Middleware from app and routers, already filtered for this route. */
  middleware: Handler<any>[];
  /** Route-level middleware and the handler, last. */
  handlers: Handler<any>[];
  schemas: { params?: Schema; query?: Schema; body?: Schema; headers?: Schema; cookies?: Schema };
  consumes: BodyKind[];
  bodyLimit: number;
  timeout: number;
  /** Innermost router's handlers first. */
  errorHandlers: ErrorHandler[];
  compression: Compression | null;
  dedup: boolean;
  /** serialize: 'compiled': res.json() writes with this; null: JSON.stringify. */
  stringify: Stringify | null;
  /** Lifecycle hooks (app, scopes, route), in running order. */
  hooks: HookLists;
  /** The classes requests and responses of this route are made from (with their scope's decorations). */
  RequestClass: typeof Request;
  ResponseClass: typeof Response;
}

export interface Dispatcher {
  settings: Settings;
  tracker: Tracker;
  tls: boolean;
  dedup: DedupTable;
}

/**
 * Builds the uWS callback for one route (called once per route at startup). `head` compiles
 * the variant a GET route registers for HEAD, so no request pays for a method check.
 */
export function compileRoute(spec: RouteSpec, ctx: Dispatcher, head = false): UwsHandler {
  const { settings, tracker } = ctx;
  const route = new CompiledRoute(spec, settings, tracker, spec.dedup ? ctx.dedup : null);
  const chain = composeChain(spec, route);
  const fixedMethod = spec.method;
  const routePath = spec.pattern.path;
  const paramNames = spec.pattern.paramNames;
  const wildcardAt = spec.pattern.wildcardAt;
  const hasParams = paramNames.length > 0 || wildcardAt !== -1;
  const bodyLimit = spec.bodyLimit;
  const tls = ctx.tls;

  const method = head ? 'HEAD' : fixedMethod;
  const timed = route.timed;
  const RequestClass = spec.RequestClass;
  const ResponseClass = spec.ResponseClass;

  return (ures: UwsResponse, ureq: UwsRequest) => {
    // A request with a body: its headers are collected now, checked for ambiguous framing
    // (before any handler runs), and kept by the request.
    const headers = headersOfFramedRequest(ureq);
    if (headers !== undefined) {
      const problem = framingProblemIn(headers);
      if (problem !== null) return refuseFraming(ures, ureq, problem, settings.logger);
    }
    const m = method ?? ureq.getCaseSensitiveMethod();
    // Any HEAD request gets no body, whichever route answers it (GET's variant, head(), any()).
    const res = new ResponseClass(ures, settings, route, head || m === 'HEAD', tls);
    const req = new RequestClass(ureq, res, m, settings, bodyLimit, routePath, headers);
    pair(req, res);
    if (timed) startTiming(res);
    let pending: Promise<void> | undefined;
    try {
      req.params = (hasParams ? readParams(ureq, paramNames, wildcardAt) : NO_PARAMS) as never;
      pending = chain(req, res);
    } catch (err) {
      route.fail(err, req, res);
    }
    leaveCallback(res);
    // Still open, compressing or streaming: the request outlives this callback.
    if (!res.finished) goAsync(req, res, route, ures, pending);
  };
}

/** The handler did not answer synchronously: make the request safe to outlive the callback. */
function goAsync(req: Request<any>, res: Response, route: CompiledRoute, ures: UwsResponse, pending: Promise<void> | undefined): void {
  snapshot(req);
  ures.onAborted(() => clientLeft(res));
  if (route.timeout > 0 && !res.headersSent) startDeadline(res, route.timeout, pending);
  route.tracker.track(res);
}

export function readParams(ureq: UwsRequest, names: string[], wildcardAt: number): Record<string, string> {
  const params: Record<string, string> = {};
  for (let i = 0; i < names.length; i++) params[names[i]!] = decodeComponent(ureq.getParameter(i) ?? '', false);
  if (wildcardAt !== -1) {
    // uWS has no accessor for the wildcard: it is the rest of the path after wildcardAt segments.
    const url = ureq.getUrl();
    let at = 0;
    for (let i = 0; i <= wildcardAt && at !== -1; i++) at = url.indexOf('/', at + (i === 0 ? 0 : 1));
    params['*'] = at === -1 ? '' : decodeComponent(url.slice(at + 1), false);
  }
  return params;
}
