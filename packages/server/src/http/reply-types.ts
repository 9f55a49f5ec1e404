// What a route with `response` schemas may answer, at the type level: a handler's returned
// value must be one of the declared replies. Types only; the run-time check (opt-in) is
// reply-check.ts.
import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { Response } from './io/response.ts';
import type { ResponseSchemas } from './types.ts';

/**
 * What a reply schema accepts: its *input* type. The value is checked against the schema as it
 * is, and sent as it is (a `.default()` or `.transform()` in a reply schema does not run).
 */
export type ReplyOf<S> = S extends StandardSchemaV1 ? StandardSchemaV1.InferInput<S> : unknown;

/** Any of a route's declared replies (a handler may set the status first: `res.status(404); return …`). */
export type DeclaredReply<Rs> = { [K in keyof Rs]: ReplyOf<Rs[K]> }[keyof Rs];

/**
 * What a handler of a route with `response` may return: a declared reply, nothing (it answered
 * with `res`), or a web Response (sent as it is, unchecked). A promise of one of these too.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a handler that answered with res returns void (`(req, res) => res.json(x)`), which undefined does not accept
export type ReplyResult<Rs> = DeclaredReply<Rs> | void | globalThis.Response;

/**
 * The reply schema's value for status `S`: the exact code, else its class (`'4XX'`), else
 * `default`; unknown (unchecked) for a status none covers or one known only at run time.
 */
export type ReplyAt<Rs, S extends number> = number extends S
  ? unknown
  : S extends keyof Rs
    ? ReplyOf<Rs[S]>
    : `${S}` extends keyof Rs // written as a string key: { '200': User }
      ? ReplyOf<Rs[`${S}`]>
      : `${S}` extends `${infer D extends 1 | 2 | 3 | 4 | 5}${string}`
        ? `${D}XX` extends keyof Rs
          ? ReplyOf<Rs[`${D}XX`]>
          : 'default' extends keyof Rs
            ? ReplyOf<Rs['default']>
            : unknown
        : unknown;

/**
 * The response of a route with `response` schemas, as its handler sees it: `res.json(value)`
 * takes a declared reply, and after `res.status(code)` in the same expression the reply of
 * that status (`res.status(404).json({ error })`). A Response in every other respect.
 */
export interface TypedResponse<Rs, S extends number | undefined = undefined> extends Response {
  status<const C extends number>(code: C): TypedResponse<Rs, C>;
  status(code: number): this;
  json(value: S extends number ? ReplyAt<Rs, S> : DeclaredReply<Rs>): void;
}

/** The handler of a route with `response` schemas (req and res as any handler's). */
export type ReplyHandler<R, Res, Next, Rs extends ResponseSchemas> = (
  req: R,
  res: Res,
  next: Next,
) => ReplyResult<Rs> | PromiseLike<ReplyResult<Rs>>;
