// Retried requests run once in a cluster() (docs/realtime.md, "Retried requests, run once"): a
// client's resend may reconnect to another worker, so the primary keeps the idempotency keys
// of every worker. A worker claims a new key here before running it (realtime/once.ts): the
// first claim runs it; a claim of a key being run waits for its outcome; a claim of a settled
// key gets the outcome at once. A worker that dies with keys unsettled hands each to the next
// claim waiting for it (that one runs it: the outcome was never sent), or forgets it.
// serveKeys() on the primary, WorkerKeys in each worker, over the worker's port (core/rpc.ts).
import { KeyWindow } from '../core/key-window.ts';
import type { Rpc } from '../core/rpc.ts';
import type { KeyLimits } from '../core/key-window.ts';
import type { KeyOutcome, SharedKeys } from '../realtime/once.ts';

type Claim = { scope: string; key: string; limits: KeyLimits };
type Settle = { scope: string; key: string; outcome: KeyOutcome };

interface Entry {
  at: number;
  /** The worker running it, until it settles. */
  worker: number;
  outcome: KeyOutcome | undefined;
  /** Claims waiting for the outcome, by worker; null hands one the key (its runner died). */
  waiting: [worker: number, resolve: (o: KeyOutcome | null) => void][];
}

/** Every worker's keys, per route (scope), each route's in arrival order (oldest first). */
export class KeyTable {
  private readonly scopes = new Map<string, KeyWindow<Entry>>();

  claim(worker: number, m: Claim): KeyOutcome | null | Promise<KeyOutcome | null> {
    let runs = this.scopes.get(m.scope);
    if (runs === undefined) this.scopes.set(m.scope, (runs = new KeyWindow<Entry>(m.limits, (e) => e.outcome !== undefined)));
    const now = Date.now();
    const known = runs.find(m.key, now);
    if (known !== undefined) {
      if (known.outcome !== undefined) return known.outcome;
      return new Promise((resolve) => known.waiting.push([worker, resolve]));
    }
    runs.add(m.key, { at: now, worker, outcome: undefined, waiting: [] });
    return null;
  }

  settle(m: Settle): void {
    const e = this.scopes.get(m.scope)?.get(m.key);
    if (e === undefined || e.outcome !== undefined) return;
    e.outcome = m.outcome;
    for (const [, resolve] of e.waiting) resolve(m.outcome);
    e.waiting = [];
  }

  /** Worker `worker` is gone: the keys it was running pass to a waiting claim, or are forgotten. */
  workerGone(worker: number): void {
    for (const runs of this.scopes.values())
      for (const [key, e] of runs) {
        if (e.outcome !== undefined || e.worker !== worker) continue;
        // Claims from the dead worker itself will never be answered: they go too.
        e.waiting = e.waiting.filter(([w]) => w !== worker);
        const next = e.waiting.shift();
        if (next === undefined) runs.delete(key);
        else {
          e.worker = next[0];
          next[1](null);
        }
      }
  }
}

/** The primary side, for one worker's port. */
export function serveKeys(rpc: Rpc, table: KeyTable, worker: number): void {
  rpc.handle('once-claim', (m: Claim) => table.claim(worker, m));
  rpc.handle('once-settle', (m: Settle) => void table.settle(m));
}

/** The worker side: the hub's SharedKeys (app.joinCluster). */
export class WorkerKeys implements SharedKeys {
  private readonly primary: Rpc;
  constructor(primary: Rpc) {
    this.primary = primary;
  }

  claim(scope: string, key: string, limits: KeyLimits): Promise<KeyOutcome | null> {
    return this.primary.request(0, 'once-claim', {
      scope,
      key,
      limits: { window: limits.window, keys: limits.keys },
    } satisfies Claim) as Promise<KeyOutcome | null>;
  }

  settle(scope: string, key: string, outcome: KeyOutcome): void {
    this.primary.request(0, 'once-settle', { scope, key, outcome } satisfies Settle).catch(() => {});
  }
}
