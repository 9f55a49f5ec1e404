// Request lifecycle, compiled once per route when the app starts:
//
//   uWS callback → Request/Response → [app & router middleware] → validation
//     → [route middleware] → handler → returned value sent → (errors → error handlers)
//
// A chain is a nest of closures built at startup; per request the only allocations are
// the Request/Response pair and one `next` per middleware that runs. When the chain
// returns with the response still open, the request goes async: we snapshot the uWS
// request, register onAborted and start the timeout clock, all before uWS regains control.
import { bodyKind, parseJson } from './io/body.ts';
import { dict } from '../util/dict.ts';
import { HttpError, ValidationError } from './errors.ts';
import { parseQuery, decodeComponent } from './io/query.ts';
import { Request } from './io/request.ts';
import { Response, type ResponseHooks } from './io/response.ts';
import type { Settings } from '../app/settings.ts';
import type { BodyKind, ErrorHandler, Handler, Next } from './types.ts';
import type { Pattern } from '../routing/path.ts';
import type { UwsHandler, UwsRequest, UwsResponse } from '../uws/index.ts';
import type { Compression } from '../serving/compression.ts';
import { MAX_SHARED_BODY, type DedupTable } from '../serving/dedup.ts';
import { compileValidator, type Schema, type Validator } from './validation.ts';
import { framingProblem, refuseFraming } from './framing.ts';

type Step = (req: Request<any>, res: Response) => Promise<void> | undefined;

const RESOLVED: Promise<void> = Promise.resolve();
const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;
const NOOP_NEXT: Next = () => RESOLVED;

/** Everything the server keeps per process for in-flight async requests. */
export interface Tracker {
  track(res: Response): void;
  settled(res: Response): void;
}

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
  const paramNames = spec.pattern.paramNames;
  const wildcardAt = spec.pattern.wildcardAt;
  const hasParams = paramNames.length > 0 || wildcardAt !== -1;
  const bodyLimit = spec.bodyLimit;
  const tls = ctx.tls;

  const method = head ? 'HEAD' : fixedMethod;

  return (ures: UwsResponse, ureq: UwsRequest) => {
    const framing = framingProblem(ureq);
    if (framing !== null) return refuseFraming(ures, ureq, framing, settings.logger);
    const m = method ?? ureq.getCaseSensitiveMethod();
    // Any HEAD request gets no body, whichever route answers it (GET's variant, head(), any()).
    const res = new Response(ures, settings, route, head || m === 'HEAD', tls);
    const req = new Request(ureq, res, m, settings, bodyLimit);
    res._bind(req);
    try {
      req.params = (hasParams ? readParams(ureq, paramNames, wildcardAt) : NO_PARAMS) as never;
      chain(req, res);
    } catch (err) {
      route.fail(err, req, res);
    }
    res._leaveCallback();
    // Still open, compressing or streaming: the request outlives this callback.
    if (!res.finished) goAsync(req, res, route, ures);
  };
}

/** The handler did not answer synchronously: make the request safe to outlive the callback. */
function goAsync(req: Request<any>, res: Response, route: CompiledRoute, ures: UwsResponse): void {
  req._snapshot();
  ures.onAborted(() => res._abort());
  if (route.timeout > 0 && !res.headersSent) res._startDeadline(route.timeout);
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

/** Per-route state the response needs: where errors go, the tracker. */
class CompiledRoute implements ResponseHooks {
  readonly timeout: number;
  readonly tracker: Tracker;
  readonly compression: Compression | null;
  readonly dedup: DedupTable | null;
  private readonly errorHandlers: ErrorHandler[];
  private readonly settings: Settings;

  constructor(spec: RouteSpec, settings: Settings, tracker: Tracker, dedup: DedupTable | null) {
    this.timeout = spec.timeout;
    this.tracker = tracker;
    this.compression = spec.compression;
    this.dedup = dedup;
    this.errorHandlers = spec.errorHandlers;
    this.settings = settings;
  }

  settled(res: Response): void {
    if (!res._sync) this.tracker.settled(res);
  }

  /** Runs the error handlers, innermost first; a handler that throws hands its error outwards. */
  fail(err: unknown, req: Request<any>, res: Response): void {
    if (res.finished) {
      if (!res.aborted) this.settings.logger.error({ err }, 'error after the response was sent');
      return;
    }
    if (res.headersSent) {
      this.settings.logger.error({ err }, 'error while streaming a response; closing the connection');
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
      this.runErrorHandler(i + 1, next, req, res);
      return;
    }
    if (isPromise(out)) {
      out.then(
        (value) => this.afterErrorHandler(value, i, err, req, res),
        (next) => this.runErrorHandler(i + 1, next, req, res),
      );
    } else this.afterErrorHandler(out, i, err, req, res);
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
  if (status >= 500) settings.logger.error({ err, method: req.method, url: req.url }, 'request failed');
  else settings.logger.debug({ err, method: req.method, url: req.url, status }, 'request rejected');
  const body: Record<string, unknown> = {
    error: err instanceof HttpError && err.expose ? err.message : status >= 500 ? 'Internal Server Error' : (err as Error)?.message ?? 'Error',
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

// ----- chain composition ------------------------------------------------------------

function composeChain(spec: RouteSpec, route: CompiledRoute): Step {
  const handlers = spec.handlers;
  let step: Step = terminal(handlers[handlers.length - 1]!, route);
  for (let i = handlers.length - 2; i >= 0; i--) step = layer(handlers[i]!, step, route);
  if (route.dedup !== null) step = dedupGate(step, route.dedup);
  step = validationStep(spec, step, route) ?? step;
  for (let i = spec.middleware.length - 1; i >= 0; i--) step = layer(spec.middleware[i]!, step, route);
  return step;
}

/** Concurrent identical anonymous GET/HEADs: the first runs `rest`, the others wait for its response. */
function dedupGate(rest: Step, table: DedupTable): Step {
  return (req, res) => {
    const key = table.keyFor(req);
    if (key === null) return rest(req, res);
    const leader = table.follow(key);
    if (leader !== null) {
      return leader.then((shared) => {
        if (shared !== null) res._replay(shared);
        else return rest(req, res);
      });
    }
    if (table.lead(key)) res._leadDedup(key);
    return rest(req, res);
  };
}

/** The last handler: no further `next`. */
function terminal(handler: Handler<any>, route: CompiledRoute): Step {
  return (req, res) => invoke(handler, req, res, NOOP_NEXT, route);
}

/** A middleware in front of `rest`. Its `next` runs `rest` synchronously and returns its promise, if any. */
function layer(mw: Handler<any>, rest: Step, route: CompiledRoute): Step {
  return (req, res) => {
    let called = false;
    const next: Next = (err?: unknown) => {
      if (called) return Promise.reject(new Error('next() called more than once'));
      called = true;
      if (err !== undefined) {
        route.fail(err, req, res);
        return RESOLVED;
      }
      return rest(req, res) ?? RESOLVED;
    };
    return invoke(mw, req, res, next, route);
  };
}

/** Calls one handler and routes its result: a value is sent, a promise awaited, an error handled. */
function invoke(fn: Handler<any>, req: Request<any>, res: Response, next: Next, route: CompiledRoute): Promise<void> | undefined {
  let out: unknown;
  try {
    out = fn(req, res, next);
  } catch (err) {
    route.fail(err, req, res);
    return undefined;
  }
  if (out === undefined) return undefined;
  if (isPromise(out)) {
    return (out instanceof Promise ? out : Promise.resolve(out)).then(
      (value) => {
        if (value !== undefined) sendValue(value, req, res, route);
      },
      (err) => route.fail(err, req, res),
    );
  }
  sendValue(out, req, res, route);
  return undefined;
}

function isPromise(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

/** A returned value becomes the response, unless the handler already answered. */
function sendValue(value: unknown, req: Request<any>, res: Response, route: CompiledRoute): void {
  if (res.headersSent || res.finished) return;
  try {
    if (typeof value === 'string') res.send(value);
    else if (value instanceof Uint8Array || value instanceof ArrayBuffer) res.send(value);
    else if (value instanceof globalThis.Response) sendWebResponse(value, res, route, req);
    else res.json(value);
  } catch (err) {
    route.fail(err, req, res);
  }
}

function sendWebResponse(web: globalThis.Response, res: Response, route: CompiledRoute, req: Request<any>): void {
  res.status(web.status);
  web.headers.forEach((value, key) => {
    if (key !== 'set-cookie') res.appendHeader(key, value);
  });
  for (const cookie of web.headers.getSetCookie()) res.appendHeader('set-cookie', cookie);
  if (web.body === null) res.end();
  else if (res._dedupKey !== null) bufferThenSend(web.body, res).catch((err) => route.fail(err, req, res));
  else {
    const declared = web.headers.get('content-length');
    const length = declared !== null && /^\d{1,15}$/.test(declared) ? Number(declared) : undefined;
    res.stream(web.body, length === undefined ? {} : { length }).catch((err) => route.fail(err, req, res));
  }
}

/** A deduplicated leader reads up to 512 KiB of a streamed body so it can be shared; past that it streams. */
async function bufferThenSend(body: ReadableStream<Uint8Array>, res: Response): Promise<void> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      res.end(Buffer.concat(chunks, size));
      return;
    }
    chunks.push(value);
    size += value.byteLength;
    if (size > MAX_SHARED_BODY) break;
  }
  reader.releaseLock();
  await res.stream(
    (async function* () {
      yield* chunks;
      const rest = body.getReader();
      for (let r = await rest.read(); !r.done; r = await rest.read()) yield r.value;
    })(),
  );
}

// ----- validation -----------------------------------------------------------------

/** Validates params, query, headers and cookies synchronously, then reads and validates the body if asked. */
function validationStep(spec: RouteSpec, rest: Step, route: CompiledRoute): Step | undefined {
  const s = spec.schemas;
  const params = s.params && compileValidator('params', s.params);
  const query = s.query && compileValidator('query', s.query);
  const headers = s.headers && compileValidator('headers', s.headers);
  const cookies = s.cookies && compileValidator('cookies', s.cookies);
  const body = s.body && compileValidator('body', s.body);
  if (!params && !query && !headers && !cookies && !body) return undefined;
  const consumes = spec.consumes;

  return (req, res) => {
    let pending: Promise<unknown>[] | undefined;
    try {
      // Zod and most validators answer synchronously: assign directly, no closure.
      if (params) {
        const out = params(req.params);
        if (isPromise(out)) (pending ??= []).push(assignLater(req, 'params', out));
        else req.params = out as never;
      }
      if (query) {
        const out = query(req.query);
        if (isPromise(out)) (pending ??= []).push(assignLater(req, 'query', out));
        else req._setValidated('query', out);
      }
      if (headers) {
        const out = headers(req.headers);
        if (isPromise(out)) (pending ??= []).push(assignLater(req, 'headers', out));
        else req._setValidated('headers', out);
      }
      if (cookies) {
        const out = cookies(req.cookies);
        if (isPromise(out)) (pending ??= []).push(assignLater(req, 'cookies', out));
        else req._setValidated('cookies', out);
      }
      if (body) {
        // A body is always awaited, so the request will outlive this callback: copy the uWS
        // request now, once, and the header reads below come from the copy.
        req._snapshot();
        const read = readBody(req, consumes).then((raw) => assignBody(req, body(raw)));
        if (pending === undefined) return read.then(() => rest(req, res), (err) => route.fail(err, req, res));
        pending.push(read);
      }
    } catch (err) {
      route.fail(err, req, res);
      return undefined;
    }
    if (pending === undefined) return rest(req, res);
    return (pending.length === 1 ? pending[0]! : Promise.all(pending)).then(
      () => rest(req, res),
      (err) => route.fail(err, req, res),
    );
  };
}

type Target = 'params' | 'query' | 'headers' | 'cookies' | 'body';

function assignLater(req: Request<any>, key: Target, result: PromiseLike<unknown>): Promise<void> {
  return Promise.resolve(result).then((value) => req._setValidated(key, value));
}

function assignBody(req: Request<any>, out: unknown): Promise<void> | undefined {
  if (isPromise(out)) return assignLater(req, 'body', out);
  req.body = out as never;
  return undefined;
}

const NO_BODY: Promise<unknown> = Promise.resolve(undefined);
const EMPTY = Buffer.alloc(0);

/** Reads and parses the body for a `body` schema. JSON, the common case, costs one promise. */
function readBody(req: Request<any>, consumes: BodyKind[]): Promise<unknown> {
  try {
    const type = req._header('content-type');
    const reader = req._bodyReader();
    if (type === undefined) {
      if (reader === null) return NO_BODY; // no body at all: let the schema decide (optional bodies)
      throw new HttpError(415, `Missing Content-Type; expected ${consumes.join(' or ')}`);
    }
    const kind = bodyKind(type);
    if (kind === 'other' || !consumes.includes(kind)) {
      throw new HttpError(415, `Unsupported Content-Type "${type}"; expected ${consumes.join(' or ')}`);
    }
    if (kind === 'json') {
      if (reader === null) parseJson(EMPTY); // throws the 400 for an empty JSON body
      return reader!.collect().then(parseJson);
    }
    return readFormOrText(req, kind);
  } catch (err) {
    return Promise.reject(err);
  }
}

async function readFormOrText(req: Request<any>, kind: BodyKind): Promise<unknown> {
  if (kind === 'text') return req.text();
  if (kind === 'urlencoded') return parseQuery(await req.text());
  const form = await req.formData();
  const out = dict<unknown>();
  for (const [key, value] of form) {
    const prev = out[key];
    // push, not spread: 20,000 same-name parts must cost linear time, not quadratic.
    if (prev === undefined) out[key] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else out[key] = [prev, value];
  }
  return out;
}

export type { Validator };
