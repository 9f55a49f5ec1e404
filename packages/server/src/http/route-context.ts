// Per-route state the lifecycle needs at request time, and the error path: the route's error
// handlers, innermost first, then the default one.
import { HttpError, RequestTimeoutError, ValidationError } from './errors.ts';
import type { Request } from './io/request.ts';
import type { Response } from './io/response.ts';
import type { Settings } from '../core/settings.ts';
import type { ErrorHandler } from './types.ts';
import type { Compression } from './compression.ts';
import type { DedupTable } from './dedup.ts';
import type { Body, Stringify } from './io/response-states.ts';
import { isPromise, sendValue } from './send-value.ts';
import { NO_HOOKS, type HookLists } from './hooks.ts';
import { bytesWritten, elapsed, finishEnd, finishWith, inCallback, logFor, requestOf } from './io/exchange.ts';

/** The header lines of the plain 500 an onSend failure answers. */
const JSON_HEADERS: readonly string[] = ['content-type', 'application/json; charset=utf-8'];

/** One link of a route's chain (chain.ts composes them). */
export type Step = (req: Request<any>, res: Response) => Promise<void> | undefined;

/** Everything the server keeps per process for in-flight async requests. */
export interface Tracker {
  track(res: Response): void;
  settled(res: Response): void;
}

/** What CompiledRoute takes from the route's spec. */
export interface RouteContextSpec {
  timeout: number;
  errorHandlers: ErrorHandler[];
  compression: Compression | null;
  hooks?: HookLists;
  stringify?: Stringify | null;
}

/**
 * Per-route state the response needs: where errors go, the tracker. It is the response's
 * ResponseHooks (checked where compile-route.ts passes it to the Response); no `implements`
 * clause, because that interface is internal and stripped from the published declarations.
 */
export class CompiledRoute {
  readonly timeout: number;
  readonly tracker: Tracker;
  readonly compression: Compression | null;
  readonly dedup: DedupTable | null;
  /** serialize: 'compiled' (serializer.ts): what res.json() writes with; null for JSON.stringify. */
  readonly stringify: Stringify | null;
  /** Whether requests are timed (an onResponse hook wants their duration): compile-route.ts starts the clock. */
  readonly timed: boolean;
  /** Whether Zod schemas get Zod's generated parser (the compileSchemas option): the validation step reads it. */
  readonly compileSchemas: boolean;
  /** The response calls this instead of writing a body when the route has onSend hooks (response.ts, end()). */
  readonly onSend: ((req: Request<any>, res: Response, body: Body | undefined) => void) | null;
  private readonly errorHandlers: ErrorHandler[];
  private readonly settings: Settings;
  private readonly hooks: HookLists;
  /** True when settle-time hooks (onResponse, onAbort) exist: one branch per request otherwise. */
  private readonly observed: boolean;

  constructor(spec: RouteContextSpec, settings: Settings, tracker: Tracker, dedup: DedupTable | null) {
    this.timeout = spec.timeout;
    this.tracker = tracker;
    this.compression = spec.compression;
    this.stringify = spec.stringify ?? null;
    this.dedup = dedup;
    this.errorHandlers = spec.errorHandlers;
    this.settings = settings;
    this.compileSchemas = settings.compileSchemas;
    const hooks = (this.hooks = spec.hooks ?? NO_HOOKS);
    this.timed = hooks.onResponse !== undefined;
    this.observed = hooks.onResponse !== undefined || hooks.onAbort !== undefined;
    this.onSend = hooks.onSend !== undefined ? this.sendThrough : null;
  }

  settled(res: Response): void {
    if (!inCallback(res)) this.tracker.settled(res);
    if (this.observed) this.settledHooks(res);
  }

  /** onAbort (the client left), then onResponse with what was written. */
  private settledHooks(res: Response): void {
    const req = requestOf(res);
    const hooks = this.hooks;
    if (res.aborted && hooks.onAbort !== undefined)
      for (const hook of hooks.onAbort) this.observe('onAbort', req, hook, req, res, undefined);
    if (hooks.onResponse === undefined) return;
    const info = { status: res.statusCode, bytes: bytesWritten(res), duration: elapsed(res), aborted: res.aborted };
    for (const hook of hooks.onResponse) this.observe('onResponse', req, hook, req, res, info);
  }

  /** Runs a hook that only observes: a throw or a rejection is logged, never answered. */
  private observe(name: string, req: Request<any>, hook: (a: any, b: any, c: any) => unknown, a: unknown, b: unknown, c: unknown): void {
    try {
      const out = hook(a, b, c);
      if (isPromise(out)) Promise.resolve(out).catch((err) => hookFailed(name, err, req));
    } catch (err) {
      hookFailed(name, err, req);
    }
  }

  /**
   * The onSend hooks, in order, then the write: each may replace the payload (a string or
   * bytes); they may still set headers. A hook that
   * throws, or returns something that is not a body, turns the answer into a plain 500
   * (logged) without running the hooks again.
   */
  private readonly sendThrough = (req: Request<any>, res: Response, body: Body | undefined): void => {
    this.sendFrom(0, req, res, body);
  };

  private sendFrom(i: number, req: Request<any>, res: Response, payload: Body | undefined): void {
    const list = this.hooks.onSend!;
    for (; i < list.length; i++) {
      let out: unknown;
      try {
        out = list[i]!(req, res, payload);
      } catch (err) {
        return this.sendFailed(err, req, res);
      }
      if (isPromise(out)) {
        const next = i + 1;
        Promise.resolve(out).then(
          (value) => {
            if (res.finished) return;
            if (value !== undefined && !isBody(value)) return this.sendFailed(notABody(value), req, res);
            this.sendFrom(next, req, res, value === undefined ? payload : value);
          },
          (err) => this.sendFailed(err, req, res),
        );
        return;
      }
      if (out !== undefined) {
        if (!isBody(out)) return this.sendFailed(notABody(out), req, res);
        payload = out;
      }
    }
    if (!res.finished) finishEnd(res, payload);
  }

  private sendFailed(err: unknown, req: Request<any>, res: Response): void {
    logFor(req).error({ err, method: req.method, route: req.route, url: req.url }, 'onSend hook failed: answered 500');
    if (res.finished) return;
    finishWith(res, 500, JSON_HEADERS, '{"error":"Internal Server Error"}');
  }

  /** Runs the error handlers, innermost first; a handler that throws hands its error outwards. */
  fail(err: unknown, req: Request<any>, res: Response): void {
    const hooks = this.hooks;
    if (hooks.onTimeout !== undefined && err instanceof RequestTimeoutError)
      for (const hook of hooks.onTimeout) this.observe('onTimeout', req, hook, req, res, undefined);
    if (hooks.onError !== undefined) for (const hook of hooks.onError) this.observe('onError', req, hook, err, req, res);
    if (res.finished) {
      // A client that left mid-request (its body reads reject with ClientAbortError) is routine.
      if (res.aborted) this.settings.logger.debug({ err, method: req.method, url: req.url }, 'request failed after the client left');
      else this.settings.logger.error({ err, method: req.method, route: req.route, url: req.url }, 'error after the response was sent');
      return;
    }
    if (res.headersSent) {
      this.settings.logger.error(
        { err, method: req.method, route: req.route, url: req.url },
        'error while streaming a response; closing the connection',
      );
      res.destroy();
      return;
    }
    this.runErrorHandler(0, err, req, res);
  }

  private runErrorHandler(i: number, err: unknown, req: Request<any>, res: Response): void {
    const handler = this.errorHandlers[i];
    if (handler === undefined) {
      defaultErrorHandler(err, req, res, this.settings);
      return;
    }
    let out: unknown;
    try {
      out = handler(err, req, res);
    } catch (next) {
      this.errorHandlerThrew(i, err, next, req, res);
      return;
    }
    if (isPromise(out)) {
      out.then(
        (value) => this.afterErrorHandler(value, i, err, req, res),
        (next) => this.errorHandlerThrew(i, err, next, req, res),
      );
    } else this.afterErrorHandler(out, i, err, req, res);
  }

  /**
   * An error handler threw: the next handler outwards gets the new error. Rethrowing the same
   * error is delegation; a different one is a bug in the handler, and the error it was
   * handling would be lost: both are logged.
   */
  private errorHandlerThrew(i: number, original: unknown, thrown: unknown, req: Request<any>, res: Response): void {
    if (thrown !== original) {
      logFor(req).error(
        { err: thrown, original: describeError(original), method: req.method, route: req.route, url: req.url },
        'error handler threw while handling another error (both logged: err is what it threw, original what it was handling)',
      );
    }
    this.runErrorHandler(i + 1, thrown, req, res);
  }

  private afterErrorHandler(value: unknown, i: number, err: unknown, req: Request<any>, res: Response): void {
    if (res.headersSent) return;
    if (value !== undefined) {
      sendValue(value, req, res, this);
      return;
    }
    // The handler neither answered nor threw: let the next one (ultimately the default) answer.
    this.runErrorHandler(i + 1, err, req, res);
  }
}

/** Status 500 unless the error says otherwise; stack traces only when exposeErrors is on. */
export function defaultErrorHandler(err: unknown, req: Request<any>, res: Response, settings: Settings): void {
  const status = errorStatus(err);
  const log = logFor(req);
  if (err instanceof RequestTimeoutError)
    log.error({ method: req.method, route: req.route, url: req.url, timeout: err.timeout, handlerPromise: err.pending }, err.detail);
  else if (status >= 500) log.error({ err, method: req.method, route: req.route, url: req.url }, 'request failed');
  else log.debug({ err, method: req.method, url: req.url, status }, 'request rejected');
  const body: Record<string, unknown> = {
    error:
      err instanceof HttpError && err.expose ? err.message : status >= 500 ? 'Internal Server Error' : ((err as Error)?.message ?? 'Error'),
  };
  if (err instanceof ValidationError) body.issues = err.issues;
  if (settings.exposeErrors && err instanceof Error) {
    body.message = err.message;
    body.stack = err.stack;
  }
  res.status(status);
  if (err instanceof HttpError && err.headers) for (const k in err.headers) res.header(k, err.headers[k]!);
  res.json(body);
}

function errorStatus(err: unknown): number {
  const s = (err as { status?: unknown; statusCode?: unknown } | null)?.status ?? (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof s === 'number' && Number.isInteger(s) && s >= 400 && s <= 599 ? s : 500;
}

/** An error as plain data, for log fields other than `err` (which loggers serialize themselves). */
function describeError(err: unknown): unknown {
  return err instanceof Error ? { type: err.name, message: err.message, stack: err.stack } : err;
}

/** A hook that only observes failed: logged with the request, never answered. */
function hookFailed(name: string, err: unknown, req: Request<any>): void {
  logFor(req).error({ err, method: req.method, route: req.route, url: req.url }, `${name} hook failed`);
}

function isBody(value: unknown): value is Body {
  return typeof value === 'string' || value instanceof Uint8Array || value instanceof ArrayBuffer;
}

function notABody(value: unknown): TypeError {
  return new TypeError(
    `an onSend hook returned ${value === null ? 'null' : typeof value}: return a string or bytes to replace the payload, or undefined to keep it`,
  );
}
