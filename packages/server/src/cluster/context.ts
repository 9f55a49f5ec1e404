// Which cluster worker this thread is, if any. Set by the worker side of cluster() before it
// runs the factory, read by the App's constructor: an App built in a worker takes the
// worker's thread bus and tags its log lines with the worker's id. Imports nothing from
// app/ so that app.ts can depend on it without a cycle.
import type { Bus } from '../realtime/bus/index.ts';

export interface WorkerContext {
  /** 1..workers; stays the same across restarts of that worker. */
  readonly id: number;
  readonly workers: number;
  /**
   * The bus for an App built in this worker: the first one gets the thread bus (composed with
   * its own bus, if it has one); later ones keep their own.
   */
  claimBus(app: object, own: Bus | undefined): Bus | undefined;
  /** Messages this worker sent to and received from the others; static files it loaded itself or took from another worker. */
  stats(): { readonly sent: number; readonly received: number; readonly staticMade: number; readonly staticShared: number };
}

let current: WorkerContext | undefined;

/** The cluster worker running in this thread, or undefined (no cluster, or the primary). */
export function clusterWorker(): WorkerContext | undefined {
  return current;
}

/** @internal */
export function enterWorker(context: WorkerContext): void {
  current = context;
}
