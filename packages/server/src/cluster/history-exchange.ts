// History in a cluster() (docs/history.md, "In a cluster"): the primary keeps the one memory
// store every worker uses, so a topic is numbered once for the whole cluster and survives a
// worker's restart (a client recovers on whichever worker it reconnects to). Workers ask over
// their port to the primary (core/rpc.ts); each worker's requests are answered in the order it
// sent them, which keeps its publishes in order. Internal to src/cluster/: serveHistory() on
// the primary, WorkerHistoryStore in each worker.
import type { Rpc } from '../core/rpc.ts';
import type { MemoryHistoryStore } from '../realtime/history/memory.ts';
import type { HistoryOptions } from '../realtime/history/options.ts';
import type { Appended, HistoryRead, HistoryRequest, HistoryStore } from '../realtime/history/store.ts';

/** `size` and `ttl` only: a store option is the worker's own, and would not clone. */
type Limits = { size: number; ttl?: number };

type Append = { topic: string; event: string; json: string | undefined; limits: Limits };
type Read = { topic: string; request: HistoryRequest; limits: Limits };
type Kept = { topic: string; limits: Limits };

/** The primary side: `store` answers every worker's requests (one Rpc per worker). */
export function serveHistory(rpc: Rpc, store: MemoryHistoryStore): void {
  rpc.handle('history-append', (m: Append) => store.append(m.topic, m.event, m.json, m.limits));
  rpc.handle('history-read', (m: Read) => store.read(m.topic, m.request, m.limits));
  rpc.handle('history-kept', (m: Kept) => store.kept(m.topic, m.limits));
}

const limitsOf = (o: Readonly<HistoryOptions>): Limits => (o.ttl === undefined ? { size: o.size } : { size: o.size, ttl: o.ttl });

/** The worker side: the default history store of the cluster's App. */
export class WorkerHistoryStore implements HistoryStore {
  readonly shared = true;
  private readonly primary: Rpc;

  /** `primary`: this worker's requests to the primary (peer 0). */
  constructor(primary: Rpc) {
    this.primary = primary;
  }

  private ask<T>(channel: string, data: Append | Read | Kept): Promise<T> {
    return this.primary.request(0, channel, data).then(
      (result) => result as T,
      (err: Error) => {
        throw new Error(`cluster history: ${err.message}`);
      },
    );
  }

  append(topic: string, event: string, json: string | undefined, options: Readonly<HistoryOptions>): Promise<Appended> {
    return this.ask('history-append', { topic, event, json, limits: limitsOf(options) });
  }

  read(topic: string, request: HistoryRequest, options: Readonly<HistoryOptions>): Promise<HistoryRead> {
    const req: HistoryRequest =
      request.since !== undefined
        ? { since: { offset: request.since.offset, epoch: request.since.epoch } }
        : request.last !== undefined
          ? { last: request.last }
          : {};
    return this.ask('history-read', { topic, request: req, limits: limitsOf(options) });
  }

  /** Messages the primary keeps for `topic` now (the dashboard's history column). */
  kept(topic: string, options: Readonly<HistoryOptions>): Promise<number> {
    return this.ask('history-kept', { topic, limits: limitsOf(options) });
  }
}
