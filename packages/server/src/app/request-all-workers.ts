// app.requestAll() across the workers of a cluster() and the servers of a bus (docs/realtime.md,
// "Acknowledged broadcasts"): this worker asks its own subscribers; through the request/reply
// primitive between threads (core/rpc.ts, the one behind app.cluster.request) every other
// worker asks its own; through a broker bus (Bus.askAll) every other server asks its own;
// the lists are joined. Ids name the worker (`"<worker>:<ws.id>"`), and the server when there
// is a broker bus (`"<server>:<worker>:<ws.id>"`), so they stay unique. Errors cross threads
// and servers as `{ code, message }` and become SocketRequestErrors again here.
import type { Logger } from '../core/logger.ts';
import type { Rpc } from '../core/rpc.ts';
import type { Bus, BusAnswer, BusAsk } from '../realtime/bus/index.ts';
import type { WsHub } from '../realtime/hub.ts';
import { encodeData } from '../realtime/protocol.ts';
import { mergeAnswer, toBusAnswer, type RequestAllResult } from '../realtime/request-all.ts';
import { requestTimeout, type SocketRequestOptions } from '../realtime/requests.ts';

/** The channel between workers; `__` names are the framework's (app.cluster.handle users pick others). */
export const REQUEST_ALL_CHANNEL = '__tachyon.requestAll';
/** A worker gets this long past the clients' timeout to send its list back (thread hop, GC pauses on busy machines). */
const WORKER_MARGIN_MS = 2000;

/** Where the App stands in its cluster, read at each call (joinCluster sets it before the app starts). */
export interface RequestAllPlace {
  readonly worker: number;
  readonly workers: number;
  readonly hub: WsHub;
}

/**
 * The bus to the other servers: the App's own, else its hub's (in a cluster() whose primary
 * relays to a broker, the worker's thread bus asks through the relay).
 */
const serversBus = (place: RequestAllPlace, bus: Bus | undefined): Bus => bus ?? place.hub.bus;

/** The start of this worker's socket ids: `"<server>:<worker>:"` with a broker bus, else `"<worker>:"`. */
const idPrefix = (place: RequestAllPlace, bus: Bus) => (bus.server === undefined ? `${place.worker}:` : `${bus.server}:${place.worker}:`);

/** Answers the other workers' (and the relay's) requestAll with this worker's subscribers. */
export function serveRequestAll(rpc: Rpc, place: RequestAllPlace, bus: Bus | undefined): void {
  rpc.handle(REQUEST_ALL_CHANNEL, async (ask: BusAsk): Promise<BusAnswer> => {
    const prefix = idPrefix(place, serversBus(place, bus));
    const own = await place.hub.requestAll(ask.topic, ask.event, ask.data, { timeout: ask.timeout }, prefix);
    return toBusAnswer(own);
  });
}

/**
 * Every subscriber of `topic` in every worker and on every server. Arguments are checked (and
 * throw) before anything is sent, as in one process. A worker or server that cannot answer
 * (restarting, gone, past the timeout and its margin) is logged: its subscribers are in
 * neither list.
 */
export function requestAllWorkers<Reply>(
  rpc: Rpc,
  place: RequestAllPlace,
  bus: Bus | undefined,
  log: Logger,
  topic: string,
  event: string,
  data: unknown,
  options: SocketRequestOptions | undefined,
): Promise<RequestAllResult<Reply>> {
  const far = serversBus(place, bus);
  // Checks the arguments: a bad one throws here, synchronously, as in one process.
  const local = place.hub.requestAll<Reply>(topic, event, data, options, idPrefix(place, far));
  const servers = far.askAll !== undefined;
  if (place.workers <= 1 && !servers) return local;
  const timeout = requestTimeout(options);
  // As JSON sees it (toJSON applied), not as a structured clone would copy it: the other
  // workers' clients get the same bytes as this worker's.
  const json = encodeData(data);
  const ask: BusAsk = { topic, event, data: json === undefined ? undefined : JSON.parse(json), timeout };
  const rpcOptions = timeout === 0 ? {} : { timeout: timeout + WORKER_MARGIN_MS };
  const others: Promise<BusAnswer | null>[] = [];
  for (let w = 1; w <= place.workers; w++) {
    if (w === place.worker) continue;
    others.push(
      (rpc.request(w, REQUEST_ALL_CHANNEL, ask, rpcOptions) as Promise<BusAnswer>).catch((err: Error) => {
        log.warn({ err, worker: w, topic, event }, 'app.requestAll(): a worker did not answer; its subscribers are not counted');
        return null;
      }),
    );
  }
  const remote = servers ? far.askAll!(ask) : Promise.resolve([]);
  return Promise.all([local, Promise.all(others), remote]).then(([mine, theirs, far]) => {
    const result: RequestAllResult<Reply> = { replies: [...mine.replies], missing: [...mine.missing] };
    for (const answer of [...theirs, ...far]) if (answer !== null) mergeAnswer(result, answer, event);
    return result;
  });
}
