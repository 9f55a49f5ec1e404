// The validation step of the chain: params, query, headers and cookies synchronously, then
// the body (read, parsed by content type, validated) when the route has a body schema.
import { bodyKind, parseJson } from './io/body.ts';
import { dict } from '../core/dict.ts';
import { HttpError } from './errors.ts';
import { parseQuery } from './io/query.ts';
import type { Request } from './io/request.ts';
import type { Response } from './io/response.ts';
import { bodyReader, setValidated, snapshot } from './io/exchange.ts';
import type { BodyKind } from './types.ts';
import { compileValidator, type Schema, type Validator } from './validation.ts';
import { isPromise } from './send-value.ts';
import type { CompiledRoute, Step } from './route-context.ts';

/** The schemas and accepted body kinds of a route. */
export interface ValidationSpec {
  schemas: { params?: Schema; query?: Schema; body?: Schema; headers?: Schema; cookies?: Schema };
  consumes: BodyKind[];
}

/** Validates params, query, headers and cookies synchronously, then reads and validates the body if asked. */
export function validationStep(spec: ValidationSpec, rest: Step, route: CompiledRoute): Step | undefined {
  const s = spec.schemas;
  const compile = route.compileSchemas;
  const params = s.params && compileValidator('params', s.params, compile);
  const query = s.query && compileValidator('query', s.query, compile);
  const headers = s.headers && compileValidator('headers', s.headers, compile);
  const cookies = s.cookies && compileValidator('cookies', s.cookies, compile);
  const body = s.body && compileValidator('body', s.body, compile);
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
        else setValidated(req, 'query', out);
      }
      if (headers) {
        const out = headers(req.headers);
        if (isPromise(out)) (pending ??= []).push(assignLater(req, 'headers', out));
        else setValidated(req, 'headers', out);
      }
      if (cookies) {
        const out = cookies(req.cookies);
        if (isPromise(out)) (pending ??= []).push(assignLater(req, 'cookies', out));
        else setValidated(req, 'cookies', out);
      }
      if (body) {
        // A body is always awaited, so the request will outlive this callback: copy the uWS
        // request now, once, and the header reads below come from the copy.
        snapshot(req);
        // The common case, a JSON body and nothing else pending: one promise to the handler.
        if (pending === undefined && isJson(req, consumes)) return jsonBodyThenRest(req, res, body, rest, route);
        const read = readBody(req, consumes).then((raw) => assignBody(req, body(raw)));
        if (pending === undefined)
          return read.then(
            () => rest(req, res),
            (err) => route.fail(err, req, res),
          );
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
  return Promise.resolve(result).then((value) => setValidated(req, key, value));
}

function assignBody(req: Request<any>, out: unknown): Promise<void> | undefined {
  if (isPromise(out)) return assignLater(req, 'body', out);
  req.body = out as never;
  return undefined;
}

/** True when the request declares a JSON body the route accepts (the rest, and every error, goes through readBody). */
function isJson(req: Request<any>, consumes: BodyKind[]): boolean {
  const type = req.header('content-type');
  return type !== undefined && bodyKind(type) === 'json' && consumes.includes('json') && bodyReader(req) !== null;
}

/**
 * Reads, parses and validates a JSON body, then runs the rest of the chain: one promise (the
 * reader's) and one reaction, where reading, parsing, assigning and continuing took a promise
 * and a microtask each. Not a callback from uWS's data handler, which would save that one
 * too: a promise reaction runs in the AsyncLocalStorage context of the step that registered
 * it (OpenTelemetry's span, set by middleware around `next()`), a uWS callback in none.
 */
function jsonBodyThenRest(req: Request<any>, res: Response, validate: Validator, rest: Step, route: CompiledRoute): Promise<void> {
  return bodyReader(req)!
    .collect()
    .then(
      (raw) => {
        let out: unknown;
        try {
          out = validate(parseJson(raw));
        } catch (err) {
          return route.fail(err, req, res);
        }
        if (isPromise(out))
          return assignLater(req, 'body', out).then(
            () => rest(req, res),
            (err) => route.fail(err, req, res),
          );
        req.body = out as never;
        return rest(req, res);
      },
      (err) => route.fail(err, req, res),
    );
}

const NO_BODY: Promise<unknown> = Promise.resolve(undefined);
const EMPTY = Buffer.alloc(0);

/** Reads and parses the body for a `body` schema. JSON, the common case, costs one promise. */
function readBody(req: Request<any>, consumes: BodyKind[]): Promise<unknown> {
  try {
    const type = req.header('content-type');
    const reader = bodyReader(req);
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
