// HTTP lifecycle hooks (docs/hooks.md), in Fastify's order:
//
//   onRequest → [app & router middleware] → preValidation → validation → preHandler
//     → [route middleware] → handler → onSend → bytes written → onResponse
//   (onError when anything throws; onTimeout past the route's timeout; onAbort when the client left)
//
// Hooks are gathered per route at startup (app, enclosing scopes, then the route's own) and
// compiled into the route's chain: a route without hooks has no extra step.
import type { Request } from './io/request.ts';
import type { Response } from './io/response.ts';
import type { Body } from './io/response-states.ts';

/** What `onResponse` learns about the answer once its bytes are written (or the client left). */
export interface ResponseInfo {
  /** The status sent (what the app set, even when the client left before the end). */
  readonly status: number;
  /** Body bytes written (0 for HEAD, 204 and 304). */
  readonly bytes: number;
  /** Milliseconds from the start of the request to the last byte. */
  readonly duration: number;
  /** True when the client went away before the response was complete. */
  readonly aborted: boolean;
}

/** The HTTP hooks, by name, with their signatures. Any of them may be async. */
export interface HttpHooks {
  /** First thing per request, before middleware. May answer (then nothing else runs but onSend/onResponse). */
  onRequest: (req: Request, res: Response) => unknown;
  /** After middleware, before the route's schemas are checked. May answer. */
  preValidation: (req: Request, res: Response) => unknown;
  /** After validation, before route middleware and the handler. May answer. */
  preHandler: (req: Request, res: Response) => unknown;
  /** Before a body (or none) is written: return a string or bytes to replace it, undefined to keep it. Not called for streams. */
  onSend: (req: Request, res: Response, payload: Body | undefined) => unknown;
  /** Once the response is complete (or the client left): status, bytes, duration. Errors are logged. */
  onResponse: (req: Request, res: Response, info: ResponseInfo) => unknown;
  /** An error reached the error path, before the error handlers answer. Observes; its errors are logged. */
  onError: (err: unknown, req: Request, res: Response) => unknown;
  /** The route's timeout passed without an answer (before the 503 is sent). Errors are logged. */
  onTimeout: (req: Request, res: Response) => unknown;
  /** The client closed the connection before the response was complete. Errors are logged. */
  onAbort: (req: Request, res: Response) => unknown;
}

export type HttpHookName = keyof HttpHooks;

/** Hooks gathered for one route (or declared by one scope), by name, in running order. */
export type HookLists = { readonly [K in HttpHookName]?: readonly HttpHooks[K][] };

/** A route's own hooks, in its options: one function or a list per name. */
export type RouteHooks = { [K in HttpHookName]?: HttpHooks[K] | HttpHooks[K][] };

export const HTTP_HOOK_NAMES: ReadonlySet<string> = new Set<HttpHookName>([
  'onRequest',
  'preValidation',
  'preHandler',
  'onSend',
  'onResponse',
  'onError',
  'onTimeout',
  'onAbort',
]);

export const NO_HOOKS: HookLists = Object.freeze({});

/** `inner` after `outer` (outer scopes' hooks run first); shares `outer` when `inner` adds nothing. */
export function mergeHooks(outer: HookLists, inner: HookLists): HookLists {
  let out: Record<string, unknown[]> | undefined;
  for (const name in inner) {
    const more = inner[name as HttpHookName]!;
    if (more.length === 0) continue;
    out ??= { ...(outer as Record<string, unknown[]>) };
    out[name] = [...(out[name] ?? []), ...more];
  }
  return (out as HookLists | undefined) ?? outer;
}

/** Checks a route's `hooks` option and returns it as lists. `where` names the route in errors. */
export function routeHookLists(where: string, hooks: unknown): HookLists {
  if (hooks === undefined) return NO_HOOKS;
  if (typeof hooks !== 'object' || hooks === null) throw new TypeError(`${where}: hooks must be an object like { preHandler: [fn] }`);
  const out: Record<string, unknown[]> = {};
  for (const [name, value] of Object.entries(hooks)) {
    if (!HTTP_HOOK_NAMES.has(name))
      throw new TypeError(`${where}: unknown hook "${name}" (route hooks: ${[...HTTP_HOOK_NAMES].join(', ')})`);
    const list = Array.isArray(value) ? value : [value];
    for (const fn of list) checkHookFunction(name, fn, where);
    out[name] = list;
  }
  return out as HookLists;
}

export function checkHookFunction(name: string, fn: unknown, where: string): void {
  if (typeof fn !== 'function') throw new TypeError(`${where}: hook "${name}" must be a function, got ${fn === null ? 'null' : typeof fn}`);
}
