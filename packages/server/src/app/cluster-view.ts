// app.cluster: what an App knows of the cluster() it runs in (docs/cluster.md). Outside a
// cluster the counts are this process's and requests to worker 0 are handled here, so app code
// reads the same in one process and in N workers. Requests travel through an Rpc (core/rpc.ts)
// that app.joinCluster() connects to the other workers.
import { ClusterRequestError, type ClusterHandler, type Rpc } from '../core/rpc.ts';
import type { WsHub } from '../realtime/hub.ts';

export interface ClusterRequestOptions {
  /** ms to wait for the reply (default 5000); the request then rejects with code TIMEOUT. */
  timeout?: number;
}

const DEFAULT_CLUSTER_REQUEST_TIMEOUT = 5000;

export interface ClusterCounts {
  /** This app's worker id (1..workers), 0 outside a cluster. */
  readonly worker: number;
  /** Worker threads in the cluster, 0 outside one. */
  readonly workers: number;
  /** Subscribers of `topic` in every worker (counts travel between workers once per event-loop turn). */
  subscribers(topic: string): number;
  /** Open WebSocket connections in every worker. */
  readonly connections: number;
  /**
   * Asks worker `worker` (1..workers; 0 outside a cluster, handled here, as is this worker's
   * own id) for its `channel` handler's reply to `data` (copied between threads: structured
   * clone). Rejects with a ClusterRequestError (`code`): UNKNOWN_WORKER, WORKER_GONE,
   * NO_HANDLER, HANDLER_ERROR (the handler's message), NOT_CLONEABLE, TIMEOUT (default 5 s).
   */
  request<Reply = unknown>(worker: number, channel: string, data?: unknown, options?: ClusterRequestOptions): Promise<Reply>;
  /** Answers `request(thisWorker, channel, data)` from any worker (one handler per channel). */
  handle<Data = any>(channel: string, handler: ClusterHandler<Data>): void;
  /**
   * Restarts worker `worker` without dropping anyone (docs/cluster.md, "Draining a worker"): it
   * takes no new connection, finishes its in-flight requests, closes its WebSockets with 1012
   * (clients reconnect, to the other workers), ends, and a fresh worker takes its id. Resolves
   * once that one serves (called from the drained worker itself: once the drain started).
   * Rejects outside a cluster, for an unknown id, a worker not serving or already draining,
   * and for the only worker serving.
   */
  drain(worker: number): Promise<void>;
}

/** Where the App stands: set by app.joinCluster() before the App starts. */
export interface ClusterPlace {
  worker: number;
  workers: number;
  hub: WsHub;
  /** The cluster member's drain (absent outside a cluster). */
  drain?: ((worker: number) => Promise<void>) | undefined;
}

export function clusterView(place: Readonly<ClusterPlace>, rpc: Rpc): ClusterCounts {
  return Object.freeze({
    get worker() {
      return place.worker;
    },
    get workers() {
      return place.workers;
    },
    request: <Reply>(to: number, channel: string, data?: unknown, options: ClusterRequestOptions = {}) => {
      if (typeof channel !== 'string' || channel === '')
        return Promise.reject(new TypeError('app.cluster.request(): the channel must be a non-empty string'));
      const timeout = options.timeout ?? DEFAULT_CLUSTER_REQUEST_TIMEOUT;
      if (!Number.isFinite(timeout) || timeout <= 0)
        return Promise.reject(new RangeError('app.cluster.request(): timeout must be a number of ms above 0'));
      const workers = place.workers;
      const valid = workers === 0 ? to === 0 : Number.isInteger(to) && to >= 1 && to <= workers;
      if (!valid) {
        const range = workers === 0 ? 'only 0 outside a cluster' : `1 to ${workers}`;
        return Promise.reject(new ClusterRequestError('UNKNOWN_WORKER', to, channel, `no worker ${String(to)} (worker ids are ${range})`));
      }
      return rpc.request(to, channel, data, { timeout }) as Promise<Reply>;
    },
    handle: <Data>(channel: string, handler: ClusterHandler<Data>) => {
      if (typeof channel !== 'string' || channel === '')
        throw new TypeError('app.cluster.handle(): the channel must be a non-empty string');
      if (typeof handler !== 'function') throw new TypeError('app.cluster.handle(): the handler must be a function');
      if (rpc.has(channel)) throw new Error(`app.cluster.handle(): channel "${channel}" already has a handler`);
      rpc.handle(channel, handler);
    },
    drain: async (worker: number) => {
      if (place.workers === 0 || place.drain === undefined)
        throw new Error('app.cluster.drain(): this app is not a worker of a cluster() with worker threads');
      if (!Number.isInteger(worker) || worker < 1 || worker > place.workers)
        throw new RangeError(`app.cluster.drain(): no worker ${String(worker)} (worker ids are 1 to ${place.workers})`);
      await place.drain(worker).catch((err: Error) => {
        throw new Error(`app.cluster.drain(): ${err.message}`, { cause: err });
      });
    },
    subscribers: (topic: string) => place.hub.totalSubscribers(topic),
    get connections() {
      return place.hub.totalConnections;
    },
  });
}
