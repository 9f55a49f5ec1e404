// Worker-to-worker requests in a cluster (docs/cluster.md, "Requests between workers"):
// `app.cluster.request(worker, channel, data)` asks another worker's handler of `channel` and
// resolves to its reply. They travel the same MessagePort mesh as publishes (thread-bus.ts),
// each worker's port to another being FIFO: a reply sent after a publish arrives after it.
// Outside a cluster (or to this worker itself) the handler runs here, with the same copies
// (structuredClone) and the same errors, so app code does not change with the worker count.
// Every failure is a rejection with a ClusterRequestError, never a throw in another thread.

/** What a handler gets: the request's data (a structured clone) and the asking worker's id (0 outside a cluster). */
export type ClusterHandler<Data = any, Reply = unknown> = (data: Data, fromWorker: number) => Reply | Promise<Reply>;

export interface ClusterRequestOptions {
  /** ms to wait for the reply (default 5000); the request then rejects with code TIMEOUT. */
  timeout?: number;
}

export type ClusterRequestErrorCode =
  | 'UNKNOWN_WORKER' // no such worker id (1..workers in a cluster, 0 outside one)
  | 'WORKER_GONE' // the worker is restarting, or died or closed before replying
  | 'NO_HANDLER' // the worker has no handler for the channel
  | 'HANDLER_ERROR' // the handler threw or rejected: the message is its message
  | 'NOT_CLONEABLE' // the data or the reply cannot be copied between threads (functions, sockets...)
  | 'TIMEOUT'; // no reply in time

export class ClusterRequestError extends Error {
  readonly code: ClusterRequestErrorCode;
  /** The worker asked. */
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

export const DEFAULT_REQUEST_TIMEOUT = 5000;

/** On the wire (objects, where the thread bus sends arrays): a request, a reply, or an error reply. */
export type RequestMessage =
  | { q: number; c: string; d: unknown }
  | { a: number; d: unknown }
  | { a: number; e: ClusterRequestErrorCode; m: string };

/** How requests reach the other workers: the thread bus's ports (ThreadBus.message()). */
export interface RequestLink {
  /** Posts to worker `to`; false when it has no port (not running). Throws what postMessage throws (DataCloneError). */
  post(to: number, message: RequestMessage): boolean;
}

interface Pending {
  readonly worker: number;
  readonly channel: string;
  readonly resolve: (reply: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

export class ClusterRequests {
  private readonly handlers = new Map<string, ClusterHandler>();
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** This worker's id, 0 outside a cluster. */
  private readonly self: number;
  private readonly workers: number;
  private readonly link: RequestLink | undefined;

  constructor(self: number, workers: number, link?: RequestLink) {
    this.self = self;
    this.workers = workers;
    this.link = link;
  }

  handle(channel: string, handler: ClusterHandler): void {
    if (typeof channel !== 'string' || channel === '') throw new TypeError('app.cluster.handle(): the channel must be a non-empty string');
    if (typeof handler !== 'function') throw new TypeError('app.cluster.handle(): the handler must be a function');
    if (this.handlers.has(channel)) throw new Error(`app.cluster.handle(): channel "${channel}" already has a handler`);
    this.handlers.set(channel, handler);
  }

  request(worker: number, channel: string, data?: unknown, options: ClusterRequestOptions = {}): Promise<unknown> {
    if (typeof channel !== 'string' || channel === '') return Promise.reject(new TypeError('app.cluster.request(): the channel must be a non-empty string'));
    const timeout = options.timeout ?? DEFAULT_REQUEST_TIMEOUT;
    if (!Number.isFinite(timeout) || timeout <= 0) return Promise.reject(new RangeError('app.cluster.request(): timeout must be a number of ms above 0'));
    const valid = this.workers === 0 ? worker === 0 : Number.isInteger(worker) && worker >= 1 && worker <= this.workers;
    if (!valid) {
      const range = this.workers === 0 ? 'only 0 outside a cluster' : `1 to ${this.workers}`;
      return Promise.reject(new ClusterRequestError('UNKNOWN_WORKER', worker, channel, `no worker ${String(worker)} (worker ids are ${range})`));
    }
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      const timer = setTimeout(() => this.settle(id, { a: id, e: 'TIMEOUT', m: `worker ${worker} did not answer "${channel}" within ${timeout} ms` }), timeout);
      this.pending.set(id, { worker, channel, resolve, reject, timer });
      if (worker === this.self) {
        // Here: the same copies a port would make, in a later microtask like a reply would come.
        let copy: unknown;
        try {
          copy = structuredClone(data);
        } catch (err) {
          return this.settle(id, { a: id, e: 'NOT_CLONEABLE', m: `app.cluster.request("${channel}"): the data cannot be sent to a worker: ${messageOf(err)}` });
        }
        queueMicrotask(() => this.serve(id, channel, copy, this.self, (reply) => this.settle(id, cloneReply(reply, channel))));
        return;
      }
      let posted: boolean;
      try {
        posted = this.link!.post(worker, { q: id, c: channel, d: data });
      } catch (err) {
        return this.settle(id, { a: id, e: 'NOT_CLONEABLE', m: `app.cluster.request("${channel}"): the data cannot be sent to a worker: ${messageOf(err)}` });
      }
      if (!posted) this.settle(id, { a: id, e: 'WORKER_GONE', m: `worker ${worker} is not running (it is restarting or starting)` });
    });
  }

  /** A message from worker `from`'s port. */
  receive(from: number, message: RequestMessage): void {
    if ('q' in message) {
      this.serve(message.q, message.c, message.d, from, (reply) => {
        try {
          this.link?.post(from, reply);
        } catch (err) {
          this.link?.post(from, { a: message.q, e: 'NOT_CLONEABLE', m: `the reply of worker ${this.self} to "${message.c}" cannot be sent: ${messageOf(err)}` });
        }
      });
    } else this.settle(message.a, message);
  }

  /** Worker `id` died, is restarting or left: what it was asked will never be answered. */
  peerGone(id: number): void {
    for (const [ref, p] of this.pending) {
      if (p.worker === id) this.settle(ref, { a: ref, e: 'WORKER_GONE', m: `worker ${id} stopped before answering "${p.channel}"` });
    }
  }

  /** Runs the handler of `channel`; `answer` gets the reply or the error reply. */
  private serve(id: number, channel: string, data: unknown, from: number, answer: (reply: RequestMessage) => void): void {
    const handler = this.handlers.get(channel);
    if (handler === undefined) return answer({ a: id, e: 'NO_HANDLER', m: `worker ${this.self} has no handler for "${channel}"` });
    const failed = (err: unknown) => answer({ a: id, e: 'HANDLER_ERROR', m: messageOf(err) });
    let result: unknown;
    try {
      result = handler(data, from);
    } catch (err) {
      return failed(err);
    }
    if (result !== null && typeof (result as PromiseLike<unknown>)?.then === 'function') {
      (result as PromiseLike<unknown>).then((d) => answer({ a: id, d }), failed);
    } else answer({ a: id, d: result });
  }

  private settle(id: number, reply: RequestMessage): void {
    const p = this.pending.get(id);
    if (p === undefined) return; // timed out or already settled: a late reply is dropped
    this.pending.delete(id);
    clearTimeout(p.timer);
    if ('e' in reply) p.reject(new ClusterRequestError(reply.e, p.worker, p.channel, reply.m));
    else p.resolve((reply as { d: unknown }).d);
  }
}

/** A local reply, copied like a port would copy it. */
function cloneReply(reply: RequestMessage, channel: string): RequestMessage {
  if ('q' in reply || 'e' in reply) return reply;
  try {
    return { a: reply.a, d: structuredClone(reply.d) };
  } catch (err) {
    return { a: reply.a, e: 'NOT_CLONEABLE', m: `the reply to "${channel}" cannot be sent: ${messageOf(err)}` };
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
