// app.cluster: what an App knows of the cluster() it runs in (docs/cluster.md). Outside a
// cluster the counts are this process's and requests to worker 0 are handled here, so app code
// reads the same in one process and in N workers.
import type { ClusterHandler, ClusterRequestOptions, ClusterRequests } from '../cluster/requests.ts';
import type { WsHub } from '../realtime/hub.ts';

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
}

/** `worker` and `workers` are 0 outside a cluster. */
export function clusterView(worker: number, workers: number, requests: ClusterRequests, hub: WsHub): ClusterCounts {
  return Object.freeze({
    worker,
    workers,
    request: <Reply>(to: number, channel: string, data?: unknown, options?: ClusterRequestOptions) => requests.request(to, channel, data, options) as Promise<Reply>,
    handle: <Data>(channel: string, handler: ClusterHandler<Data>) => requests.handle(channel, handler),
    subscribers: (topic: string) => hub.totalSubscribers(topic),
    get connections() {
      return hub.totalConnections;
    },
  });
}
