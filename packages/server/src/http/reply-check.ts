// Opt-in check of replies against a route's `response` schemas (the app option
// `validateResponses`, for development and tests). It is an onSend hook added at startup to
// the routes that declare `response`, first in their onSend list: with the option off no route
// has it, so requests pay nothing. It sees the payload as it will be written, so every way of
// answering is covered (a returned value, res.json, res.send, res.end); a reply that does not
// match throws, and the onSend path answers a plain 500 and logs the error (route, status,
// issues), never telling the client why.
import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { HookLists, HttpHooks } from './hooks.ts';
import type { Body } from './io/response-states.ts';
import type { Response } from './io/response.ts';
import type { ResponseSchemas } from './types.ts';
import type { Schema } from './validation.ts';

/** A reply that does not match its route's schema for its status (logged, never sent). */
export class ReplyValidationError extends Error {
  override readonly name = 'ReplyValidationError';
  /** `METHOD /pattern`. */
  readonly route: string;
  readonly status: number;
  /** Where the reply went wrong: a path into the body and a message, per issue. */
  readonly issues: readonly { path: string; message: string }[];

  constructor(route: string, status: number, issues: readonly { path: string; message: string }[]) {
    super(
      `${route} answered ${status} with a body that does not match its response schema: ${issues
        .map((i) => (i.path === '' ? i.message : `${i.path}: ${i.message}`))
        .join('; ')}`,
    );
    this.route = route;
    this.status = status;
    this.issues = issues;
  }
}

/** The schema covering `status`: the exact code, then its class (`'4XX'`), then `default`. */
export function schemaForStatus(response: ResponseSchemas, status: number): Schema | undefined {
  const byKey = response as Readonly<Record<string, Schema | undefined>>;
  return byKey[status] ?? byKey[`${Math.floor(status / 100)}XX`] ?? byKey.default;
}

/** `hooks` with the reply check first among the onSend hooks. */
export function withReplyCheck(hooks: HookLists, route: string, response: ResponseSchemas): HookLists {
  return { ...hooks, onSend: [replyCheck(route, response), ...(hooks.onSend ?? [])] };
}

const JSON_TYPE = /[/+]json\b/i;
const decoder = new TextDecoder();

function replyCheck(route: string, response: ResponseSchemas): HttpHooks['onSend'] {
  return (req, res, payload) => {
    const status = res.statusCode;
    const schema = schemaForStatus(response, status);
    if (schema === undefined) return undefined; // a status the route did not declare: not checked
    const value = replyValue(route, res, payload);
    if (value === BINARY) return undefined; // bytes are not described by a schema
    const result = schema['~standard'].validate(value);
    if (result instanceof Promise) return result.then((r) => settle(route, status, r));
    return settle(route, status, result);
  };
}

const BINARY = Symbol('binary');

/** What the client will read: JSON parsed, text as a string, nothing as undefined. */
function replyValue(route: string, res: Response, payload: Body | undefined): unknown {
  if (payload === undefined) return undefined;
  const type = String(res.getHeader('content-type') ?? '');
  const isText = typeof payload === 'string';
  if (!isText && !JSON_TYPE.test(type) && !type.toLowerCase().startsWith('text/')) return BINARY;
  const text = isText ? payload : decoder.decode(payload);
  if (!JSON_TYPE.test(type)) return text;
  try {
    return JSON.parse(text);
  } catch {
    throw new ReplyValidationError(route, res.statusCode, [{ path: '', message: `the body says ${type} but is not JSON` }]);
  }
}

function settle(route: string, status: number, result: StandardSchemaV1.Result<unknown>): undefined {
  if (result.issues === undefined) return undefined;
  throw new ReplyValidationError(
    route,
    status,
    result.issues.map((issue) => ({
      path: (issue.path ?? []).map((seg) => String(typeof seg === 'object' && seg !== null ? seg.key : seg)).join('.'),
      message: issue.message,
    })),
  );
}
