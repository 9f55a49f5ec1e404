// History in a cluster() (docs/history.md, "In a cluster"): the primary keeps the one memory
// store every worker uses, so a topic is numbered once for the whole cluster and survives a
// worker's restart (a client recovers on whichever worker it reconnects to). Workers ask over
// their message port; each worker's requests are answered in the order it sent them, which
// keeps its publishes in order. Internal to src/cluster/: PrimaryHistory on the primary,
// WorkerHistoryStore in each worker.
import { MemoryHistoryStore } from '../realtime/history/memory.ts';
import type { HistoryOptions } from '../realtime/history/options.ts';
import type { Appended, HistoryRead, HistoryRequest, HistoryStore } from '../realtime/history/store.ts';

/** `size` and `ttl` only: a store option is the worker's own, and would not clone. */
type Limits = { size: number; ttl?: number };

export type HistoryAsk =
  | { type: 'history-append'; ref: number; topic: string; event: string; json: string | undefined; limits: Limits }
  | { type: 'history-read'; ref: number; topic: string; request: HistoryRequest; limits: Limits };

export type HistoryAnswer = { type: 'history'; ref: number; result?: Appended | HistoryRead; error?: string };

/** The primary side: one memory store for the whole cluster. */
export class PrimaryHistory {
  private readonly store = new MemoryHistoryStore();

  handle(message: HistoryAsk): HistoryAnswer {
    try {
      const result =
        message.type === 'history-append'
          ? this.store.append(message.topic, message.event, message.json, message.limits)
          : this.store.read(message.topic, message.request, message.limits);
      return { type: 'history', ref: message.ref, result };
    } catch (err) {
      return { type: 'history', ref: message.ref, error: err instanceof Error ? err.message : String(err) };
    }
  }
}

const limitsOf = (o: Readonly<HistoryOptions>): Limits => (o.ttl === undefined ? { size: o.size } : { size: o.size, ttl: o.ttl });

/** The worker side: the default history store of the cluster's App. */
export class WorkerHistoryStore implements HistoryStore {
  readonly shared = true;
  private next = 1;
  private readonly waiting = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  private readonly post: (message: HistoryAsk) => void;

  constructor(post: (message: HistoryAsk) => void) {
    this.post = post;
  }

  private ask<T>(message: HistoryAsk): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(message.ref, { resolve, reject });
      this.post(message);
    });
  }

  append(topic: string, event: string, json: string | undefined, options: Readonly<HistoryOptions>): Promise<Appended> {
    return this.ask({ type: 'history-append', ref: this.next++, topic, event, json, limits: limitsOf(options) });
  }

  read(topic: string, request: HistoryRequest, options: Readonly<HistoryOptions>): Promise<HistoryRead> {
    const req: HistoryRequest = request.since !== undefined ? { since: { offset: request.since.offset, epoch: request.since.epoch } } : request.last !== undefined ? { last: request.last } : {};
    return this.ask({ type: 'history-read', ref: this.next++, topic, request: req, limits: limitsOf(options) });
  }

  /** The primary answered. */
  reply(message: HistoryAnswer): void {
    const w = this.waiting.get(message.ref);
    if (w === undefined) return;
    this.waiting.delete(message.ref);
    if (message.error !== undefined) w.reject(new Error(`cluster history: ${message.error}`));
    else w.resolve(message.result);
  }
}
