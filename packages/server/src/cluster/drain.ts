// Draining one cluster worker (app.cluster.drain(), server.drain(); docs/cluster.md, "Draining a
// worker"): the way to restart a worker on purpose (a leak, a stuck dependency, an operator on
// the dashboard) without dropping anyone. The order matters for the same reason as in
// leave.ts: the worker leaves the acceptor first, so no new connection is queued on its loop;
// then it closes as a whole server does (in-flight requests finish, streams end), except that
// its WebSockets get 1012 (service restart), which clients answer by reconnecting at once, and
// the acceptor hands those reconnects to the other workers; then the thread ends and a fresh
// worker takes its id (no crash backoff: nothing failed).

/** What the primary knows of a worker, for the checks. */
export interface DrainCandidate {
  readonly id: number;
  /** Started and serving (not starting, restarting or gone). */
  readonly serving: boolean;
  readonly draining: boolean;
}

/**
 * Why `id` cannot be drained now, or undefined when it can. The last serving worker is
 * refused: its clients would have nowhere to reconnect to until the replacement starts.
 */
export function drainRefusal(workers: readonly DrainCandidate[], id: unknown, closing: boolean): string | undefined {
  if (closing) return 'the cluster is closing';
  const target = Number.isInteger(id) ? workers.find((w) => w.id === id) : undefined;
  if (target === undefined) return `no worker ${String(id)} (worker ids are 1 to ${workers.length})`;
  if (target.draining) return `worker ${target.id} is already draining`;
  if (!target.serving) return `worker ${target.id} is not serving (it is starting or restarting)`;
  if (!workers.some((w) => w !== target && w.serving && !w.draining))
    return `worker ${target.id} is the only one serving: its clients would have no worker to reconnect to`;
  return undefined;
}
