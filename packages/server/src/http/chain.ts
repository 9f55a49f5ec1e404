// The chain: middleware, validation, route middleware and the handler, composed once per
// route at startup into nested steps. Per request a step costs one call; a middleware adds one
// small `next` closure.
import type { Request } from './io/request.ts';
import type { Response } from './io/response.ts';
import type { Handler, Next } from './types.ts';
import type { DedupTable } from './dedup.ts';
import type { CompiledRoute, Step } from './route-context.ts';
import { isPromise, sendValue } from './send-value.ts';
import { SETTLED } from './io/response-states.ts';
import { leadDedup, replay } from './io/exchange.ts';
import { validationStep, type ValidationSpec } from './validate-step.ts';
import type { HookLists, HttpHooks } from './hooks.ts';

/** What the chain is built from. */
export interface ChainSpec extends ValidationSpec {
  /** Middleware from app and routers, already filtered for this route. */
  middleware: Handler<any>[];
  /** Route-level middleware and the handler, last. */
  handlers: Handler<any>[];
  /** The route's lifecycle hooks (outer scopes first). */
  hooks: HookLists;
}

// The shared settled promise: the timeout's log line recognises it (nothing was pending).
const RESOLVED: Promise<void> = SETTLED;
const NOOP_NEXT: Next = () => RESOLVED;

/**
 * Composes a route's steps, innermost first: handler, route middleware, dedup gate, preHandler
 * hooks, validation, preValidation hooks, app and router middleware, onRequest hooks. Hooks
 * add a step each only where a route has them.
 */
export function composeChain(spec: ChainSpec, route: CompiledRoute): Step {
  const handlers = spec.handlers;
  const hooks = spec.hooks;
  let step: Step = terminal(handlers[handlers.length - 1]!, route);
  for (let i = handlers.length - 2; i >= 0; i--) step = layer(handlers[i]!, step, route);
  if (route.dedup !== null) step = dedupGate(step, route.dedup);
  step = hookSteps(hooks.preHandler, step, route);
  step = validationStep(spec, step, route) ?? step;
  step = hookSteps(hooks.preValidation, step, route);
  for (let i = spec.middleware.length - 1; i >= 0; i--) step = layer(spec.middleware[i]!, step, route);
  return hookSteps(hooks.onRequest, step, route);
}

type RequestHook = HttpHooks['onRequest'];

/** One step per hook in front of `rest`, in order. */
function hookSteps(list: readonly RequestHook[] | undefined, rest: Step, route: CompiledRoute): Step {
  if (list === undefined) return rest;
  for (let i = list.length - 1; i >= 0; i--) rest = hookStep(list[i]!, rest, route);
  return rest;
}

/**
 * A hook in front of `rest`: `rest` runs when the hook returns (or its promise resolves)
 * without having answered. A throw or a rejection goes to the route's error path.
 */
function hookStep(hook: RequestHook, rest: Step, route: CompiledRoute): Step {
  const resume = (req: Request<any>, res: Response): Promise<void> | undefined => (res.headersSent ? undefined : rest(req, res));
  return (req, res) => {
    let out: unknown;
    try {
      out = hook(req, res);
    } catch (err) {
      route.fail(err, req, res);
      return undefined;
    }
    if (!isPromise(out)) return resume(req, res);
    return Promise.resolve(out).then(
      () => resume(req, res),
      (err) => route.fail(err, req, res),
    );
  };
}

/** Concurrent identical anonymous GET/HEADs: the first runs `rest`, the others wait for its response. */
function dedupGate(rest: Step, table: DedupTable): Step {
  return (req, res) => {
    const key = table.keyFor(req);
    if (key === null) return rest(req, res);
    const leader = table.follow(key);
    if (leader !== null) {
      return leader.then((shared) => {
        if (shared !== null) replay(res, shared);
        else return rest(req, res);
      });
    }
    if (table.lead(key)) leadDedup(res, key);
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
