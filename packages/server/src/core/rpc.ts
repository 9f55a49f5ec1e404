// Request and reply between threads (docs/cluster.md, "Requests between workers"): the one
// primitive behind app.cluster.request()/handle() and the cluster's own exchanges with its
// primary (history, metrics, static bytes, src/cluster/). An Rpc numbers its requests, keeps
// them pending until the reply, a timeout or the peer's end, and runs the handlers of the
// requests it receives. It posts through a function (a MessagePort, a Worker, the thread bus's
// ports): it knows nothing of threads, so it lives here, below the App, which uses one with no
// peers outside a cluster. A request to itself runs here with the copies (structuredClone) and
// errors a port would give, so code does not change with the number of threads. Every failure
// is a rejection with a ClusterRequestError, never a throw in another thread.

/** What a handler gets: the request's data (a structured clone) and the asking peer's id. */
export type ClusterHandler<Data = any, Reply = unknown> = (data: Data, fromWorker: number) => Reply | Promise<Reply>;

export type ClusterRequestErrorCode =
  | 'UNKNOWN_WORKER' // no such worker id (1..workers in a cluster, 0 outside one)
  | 'WORKER_GONE' // the worker is restarting, or died or closed before replying
  | 'NO_HANDLER' // the worker has no handler for the channel
  | 'HANDLER_ERROR' // the handler threw or rejected: the message is its message
  | 'NOT_CLONEABLE' // the data or the reply cannot be copied between threads (functions, sockets...)
  | 'TIMEOUT'; // no reply in time

export class ClusterRequestError extends Error {
  readonly code: ClusterRequestErrorCode;
  /** The worker asked (0: the primary, or this thread outside a cluster). */
  readonly worker: number;
  readonly channel: string;
  constructor(code: ClusterRequestErrorCode, worker: number, channel: string, message: string) {
    super(message);
    this.name = 'ClusterRequestError';
    this.code = code;
    this.worker = worker;
    this.channel = channel;
  }
}

/** On the wire (plain objects: never confused with the thread bus's arrays or `{ type }` messages). */
export type RpcMessage =
  | { q: number; c: string; d: unknown } // a request
  | { a: number; d: unknown } // its reply
  | { a: number; e: ClusterRequestErrorCode; m: string }; // its error reply

/** True for a message an Rpc sent. */
export function isRpcMessage(message: unknown): message is RpcMessage {
  return typeof message === 'object' && message !== null && ('q' in message || 'a' in message) && !('type' in message);
}

/**
 * Posts `message` to peer `to`: false when there is no such peer now (not running). May throw
 * what postMessage throws (a DataCloneError).
 */
export type RpcPost = (to: number, message: RpcMessage) => boolean;

export interface RpcRequestOptions {
  /** ms to wait for the reply; then the request rejects with TIMEOUT. Default: no limit. */
  timeout?: number;
  /** The timer does not keep the thread alive (internal exchanges). */
  unref?: boolean;
}

interface Pending {
  readonly peer: number;
  readonly channel: string;
  readonly resolve: (reply: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout | undefined;
}

const noPeers: RpcPost = () => false;

export class Rpc {
  private readonly handlers = new Map<string, ClusterHandler>();
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;
  /** This thread's id among its peers (a worker's id; 0 for the primary or outside a cluster). */
  self: number;
  private post: RpcPost;

  constructor(self = 0, post: RpcPost = noPeers) {
    this.self = self;
    this.post = post;
  }

  /** Joins peers: this thread is `self` among them, and reaches them with `post`. Before any request. */
  connect(self: number, post: RpcPost): void {
    this.self = self;
    this.post = post;
  }

  has(channel: string): boolean {
    return this.handlers.has(channel);
  }

  /** Answers requests on `channel` (one handler per channel: a second replaces the first). */
  handle(channel: string, handler: ClusterHandler): void {
    this.handlers.set(channel, handler);
  }

  /** Asks peer `to`'s handler of `channel`; resolves to its reply (a copy). */
  request(to: number, channel: string, data?: unknown, options: RpcRequestOptions = {}): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      const { timeout, unref } = options;
      let timer: NodeJS.Timeout | undefined;
      if (timeout !== undefined) {
        timer = setTimeout(
          () => this.settle(id, { a: id, e: 'TIMEOUT', m: `worker ${to} did not answer "${channel}" within ${timeout} ms` }),
          timeout,
        );
        if (unref === true) timer.unref();
      }
      this.pending.set(id, { peer: to, channel, resolve, reject, timer });
      const failed = (code: ClusterRequestErrorCode, m: string) => this.settle(id, { a: id, e: code, m });
      if (this.closed) return failed('WORKER_GONE', `"${channel}": this thread is closing`);
      let posted: boolean;
      try {
        posted = to === this.self ? this.loopback({ q: id, c: channel, d: data }) : this.post(to, { q: id, c: channel, d: data });
      } catch (err) {
        return failed('NOT_CLONEABLE', `"${channel}": the data cannot be sent to worker ${to}: ${messageOf(err)}`);
      }
      if (!posted) failed('WORKER_GONE', `worker ${to} is not running (it is restarting or starting)`);
    });
  }

  /** A message from peer `from` (what its Rpc posted). */
  receive(from: number, message: RpcMessage): void {
    if (this.closed) return;
    if ('q' in message) this.serve(from, message);
    else this.settle(message.a, message);
  }

  /** Peer `id` died, restarts or left: what it was asked will never be answered. */
  peerGone(id: number): void {
    for (const [ref, p] of this.pending) {
      if (p.peer === id) this.settle(ref, { a: ref, e: 'WORKER_GONE', m: `worker ${id} stopped before answering "${p.channel}"` });
    }
  }

  /** Rejects what is pending (WORKER_GONE) and ignores what arrives from now on. */
  close(): void {
    this.closed = true;
    for (const [ref, p] of this.pending) this.settle(ref, { a: ref, e: 'WORKER_GONE', m: `"${p.channel}": closed before the reply` });
  }

  /** To itself: copied as a port would copy it (throws the same DataCloneError), a turn later. */
  private loopback(message: RpcMessage): boolean {
    const copy = structuredClone(message);
    queueMicrotask(() => this.receive(this.self, copy));
    return true;
  }

  /** Runs the handler of a request from `from` and posts its reply or error reply back. */
  private serve(from: number, request: { q: number; c: string; d: unknown }): void {
    const id = request.q;
    const answer = (reply: RpcMessage): void => {
      try {
        this.send(from, reply);
      } catch (err) {
        this.send(from, {
          a: id,
          e: 'NOT_CLONEABLE',
          m: `the reply of worker ${this.self} to "${request.c}" cannot be sent: ${messageOf(err)}`,
        });
      }
    };
    const handler = this.handlers.get(request.c);
    if (handler === undefined) return answer({ a: id, e: 'NO_HANDLER', m: `worker ${this.self} has no handler for "${request.c}"` });
    const failed = (err: unknown) => answer({ a: id, e: 'HANDLER_ERROR', m: messageOf(err) });
    let result: unknown;
    try {
      result = handler(request.d, from);
    } catch (err) {
      return failed(err);
    }
    if (result !== null && typeof (result as PromiseLike<unknown>)?.then === 'function') {
      (result as PromiseLike<unknown>).then((d) => answer({ a: id, d }), failed);
    } else answer({ a: id, d: result });
  }

  /** A reply: through the port, or to this thread's own pending request. */
  private send(to: number, reply: RpcMessage): void {
    if (to === this.self) this.loopback(reply);
    else this.post(to, reply);
  }

  private settle(id: number, reply: RpcMessage): void {
    const p = this.pending.get(id);
    if (p === undefined) return; // timed out or already settled: a late reply is dropped
    this.pending.delete(id);
    clearTimeout(p.timer);
    if ('e' in reply) p.reject(new ClusterRequestError(reply.e, p.peer, p.channel, reply.m));
    else p.resolve((reply as { d: unknown }).d);
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
