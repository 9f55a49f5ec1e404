// The history part of a subscribe frame (docs/protocol.md, "Recovery"): `since` (the last
// position a client got, sent when it resubscribes after a reconnect) or `last` (the last N
// messages, on a fresh subscribe). Checked before anything is read: a malformed one is
// refused with a `denied` answer, never thrown.
import { isEpoch } from './epoch.ts';
import type { HistoryRequest } from './store.ts';

/** Most messages a `last` may ask for (a topic keeps at most history.size anyway). */
const MAX_LAST = 1_000_000;

/** The frame's history request, null when it has none, or the `denied` reason when it is malformed. */
export function readHistoryRequest(frame: Record<string, unknown>): HistoryRequest | null | 'invalid since' | 'invalid last' {
  const { since, last } = frame;
  if (since === undefined && last === undefined) return null;
  if (since !== undefined) {
    // A position is a client's own: one topic per frame.
    if (frame.topics !== undefined || typeof since !== 'object' || since === null) return 'invalid since';
    const { offset, epoch } = since as Record<string, unknown>;
    if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0 || !isEpoch(epoch)) return 'invalid since';
    return { since: { offset, epoch } };
  }
  if (typeof last !== 'number' || !Number.isSafeInteger(last) || last < 1 || last > MAX_LAST) return 'invalid last';
  return { last };
}
