// Middleware that needs the app it serves (WebSocket counters, a cluster link) says so with
// defineMiddleware(): the App calls its setup once, when it starts, with the public API below.
// metrics() is built on it, and any third party's middleware can be: nothing here is special
// to the built-ins, and the App never looks inside a middleware function.
import type { AppView } from './settings.ts';

/** The WebSocket counters of an app (plain numbers bumped where the traffic happens). */
export interface WebSocketCounters {
  /** Client messages received (protocol frames and raw). */
  readonly messagesIn: number;
  /** Messages sent to one socket: ws.send/sendRaw, replies, protocol answers. */
  readonly messagesOut: number;
  /** app.publish/publishRaw and ws.publish calls (a publish fans out in C++: counted once). */
  readonly publishes: number;
  /** Messages uWS dropped for a slow consumer (over maxBackpressure). */
  readonly dropped: number;
  /** Volatile messages (send or publish) skipped for a socket under backpressure. */
  readonly volatileDropped: number;
  /** Sockets closed with 4429 for being too slow. */
  readonly slowClosed: number;
}

/** Asks every other worker of a cluster for what their `collect` returns. */
export type MetricsGather = (timeout: number) => Promise<{ parts: unknown[][]; missing: number[] }>;

/** What a middleware's setup gets from the App starting with it. */
export interface MiddlewareSetupApi {
  /** The app, read-only (as `req.app`). */
  readonly app: AppView;
  /**
   * Turns on the app's WebSocket counters and returns them: the same object for every caller.
   * Until someone asks, the app counts nothing (one null check per counting point).
   */
  websocketCounters(): WebSocketCounters;
  /**
   * In a cluster worker: links `collect` (what this worker answers when another one asks) to
   * the other workers, and returns this worker's id, the worker count and how to ask them all.
   * Undefined outside a cluster.
   */
  clusterMetrics(collect: () => Promise<unknown[]>): { worker: number; workers: number; gather: MetricsGather } | undefined;
}

export type MiddlewareSetup = (api: MiddlewareSetupApi) => void;

const setups = new WeakMap<Function, MiddlewareSetup>();

/**
 * Gives a middleware a setup that the App runs once when it starts (before any request), with
 * `MiddlewareSetupApi`. Returns the middleware itself. A middleware installed in several places
 * is set up once per app.
 */
export function defineMiddleware<M extends Function>(middleware: M, setup: MiddlewareSetup): M {
  if (typeof middleware !== 'function')
    throw new TypeError('defineMiddleware(middleware, setup): middleware must be a function (req, res, next)');
  if (typeof setup !== 'function') throw new TypeError('defineMiddleware(middleware, setup): setup must be a function (api) => void');
  if (setups.has(middleware)) throw new TypeError('defineMiddleware(): this middleware already has a setup');
  setups.set(middleware, setup);
  return middleware;
}

/** The setup a middleware was defined with, if any (the App, at start). */
export function middlewareSetup(middleware: unknown): MiddlewareSetup | undefined {
  return typeof middleware === 'function' ? setups.get(middleware) : undefined;
}
