// app.requestAll() across the workers of a cluster() (docs/realtime.md, "Acknowledged
// broadcasts"): this worker asks its own subscribers and, through the request/reply primitive
// between threads (core/rpc.ts, the one behind app.cluster.request), every other worker asks
// its own; the lists are joined. Ids name the worker (`"<worker>:<ws.id>"`), so they stay
// unique. Errors cross threads as `{ code, message }` (a structured clone drops their class)
// and become SocketRequestErrors again here.
import type { Logger } from '../core/logger.ts';
import type { Rpc } from '../core/rpc.ts';
import type { WsHub } from '../realtime/hub.ts';
import { encodeData } from '../realtime/protocol.ts';
import type { RequestAllResult } from '../realtime/request-all.ts';
import { requestTimeout, SocketRequestError, type SocketRequestErrorCode, type SocketRequestOptions } from '../realtime/requests.ts';

/** The channel between workers; `__` names are the framework's (app.cluster.handle users pick others). */
export const REQUEST_ALL_CHANNEL = '__tachyon.requestAll';
/** A worker gets this long past the clients' timeout to send its list back (thread hop, GC pauses on busy machines). */
const WORKER_MARGIN_MS = 2000;

interface Ask {
  topic: string;
  event: string;
  data: unknown;
  timeout: number;
}

interface WorkerAnswer {
  replies: { id: string; data: unknown }[];
  missing: { id: string; code: SocketRequestErrorCode; message: string }[];
}

/** Where the App stands in its cluster, read at each call (joinCluster sets it before the app starts). */
export interface RequestAllPlace {
  readonly worker: number;
  readonly workers: number;
  readonly hub: WsHub;
}

/** Answers the other workers' requestAll with this worker's subscribers. */
export function serveRequestAll(rpc: Rpc, place: RequestAllPlace): void {
  rpc.handle(REQUEST_ALL_CHANNEL, async (ask: Ask): Promise<WorkerAnswer> => {
    const own = await place.hub.requestAll(ask.topic, ask.event, ask.data, { timeout: ask.timeout }, place.worker);
    return {
      replies: own.replies,
      missing: own.missing.map((m) => ({ id: m.id, code: m.error.code, message: m.error.message })),
    };
  });
}

/**
 * Every subscriber of `topic` in every worker. Arguments are checked (and throw) before
 * anything is sent, as in one process. A worker that cannot answer (restarting, gone, past
 * the timeout and its margin) is logged: its subscribers are in neither list.
 */
export function requestAllWorkers<Reply>(
  rpc: Rpc,
  place: RequestAllPlace,
  log: Logger,
  topic: string,
  event: string,
  data: unknown,
  options: SocketRequestOptions | undefined,
): Promise<RequestAllResult<Reply>> {
  // Checks the arguments: a bad one throws here, synchronously, as in one process.
  const local = place.hub.requestAll<Reply>(topic, event, data, options, place.worker);
  if (place.workers <= 1) return local;
  const timeout = requestTimeout(options);
  // As JSON sees it (toJSON applied), not as a structured clone would copy it: the other
  // workers' clients get the same bytes as this worker's.
  const json = encodeData(data);
  const ask: Ask = { topic, event, data: json === undefined ? undefined : JSON.parse(json), timeout };
  const rpcOptions = timeout === 0 ? {} : { timeout: timeout + WORKER_MARGIN_MS };
  const others: Promise<WorkerAnswer | null>[] = [];
  for (let w = 1; w <= place.workers; w++) {
    if (w === place.worker) continue;
    others.push(
      (rpc.request(w, REQUEST_ALL_CHANNEL, ask, rpcOptions) as Promise<WorkerAnswer>).catch((err: Error) => {
        log.warn({ err, worker: w, topic, event }, 'app.requestAll(): a worker did not answer; its subscribers are not counted');
        return null;
      }),
    );
  }
  return Promise.all([local, Promise.all(others)]).then(([mine, theirs]) => join(mine, theirs, event));
}

function join<Reply>(mine: RequestAllResult<Reply>, theirs: (WorkerAnswer | null)[], event: string): RequestAllResult<Reply> {
  const result: RequestAllResult<Reply> = { replies: [...mine.replies], missing: [...mine.missing] };
  for (const answer of theirs) {
    if (answer === null) continue;
    for (const r of answer.replies) result.replies.push({ id: r.id, data: r.data as Reply });
    for (const m of answer.missing) result.missing.push({ id: m.id, error: new SocketRequestError(m.code, event, m.message) });
  }
  return result;
}
