// app.requestAll() through the primary's relay (cluster({ bus }), docs/cluster.md "With a
// broker"): the relay holds the process's one broker bus, so it carries the asks both ways.
// - Out: a worker asks its siblings itself (the mesh) and the other servers through the relay:
//   one request on its relay port (ASK_SERVERS), which the relay's bus sends (Bus.askAll).
// - In: another server's ask reaches the relay's bus, whose host (the relay) asks every worker
//   on the same channel the workers ask each other with (REQUEST_ALL_CHANNEL) and joins their
//   lists into this server's one answer. A worker that dies or is silent past the clients'
//   timeout and a margin is logged and left out, never waited for beyond that.
// Both directions are requests on the relay port (core/rpc.ts): the worker's app.cluster
// endpoint hears the relay as peer 0.
import type { Logger } from '../core/logger.ts';
import type { Rpc } from '../core/rpc.ts';
import { REQUEST_ALL_CHANNEL } from '../app/request-all-workers.ts';
import type { BusAnswer, BusAsk } from '../realtime/bus/index.ts';

/** Worker → relay: ask the other servers (reserved, as REQUEST_ALL_CHANNEL). */
export const ASK_SERVERS = '__tachyon.askServers';
/**
 * A worker gets this long past the clients' timeout: less than the asking server's margin
 * (SERVER_MARGIN_MS, 2 s), so that this server's answer still arrives in time without it.
 */
const RELAY_MARGIN_MS = 1000;
/** The relay's own wait for the broker's answers: past the asking exchange's margin. */
const ASK_MARGIN_MS = 3000;

/** The worker side: what its thread bus's askAll does (the relay peer is 0). */
export function askThroughRelay(requests: Rpc, ask: BusAsk): Promise<BusAnswer[]> {
  const options = ask.timeout === 0 ? {} : { timeout: ask.timeout + ASK_MARGIN_MS, unref: true };
  return (requests.request(0, ASK_SERVERS, ask, options) as Promise<BusAnswer[]>).catch(() => []);
}

/** The relay side, for one worker's port: its asks go out on the broker bus. */
export function serveAsks(rpc: Rpc, askAll: ((ask: BusAsk) => Promise<BusAnswer[]>) | undefined): void {
  rpc.handle(ASK_SERVERS, (ask: BusAsk) => askAll?.(ask) ?? []);
}

/** Another server's ask: every worker's subscribers, as one answer. */
export async function askWorkers(workers: Iterable<[id: number, rpc: Rpc]>, ask: BusAsk, logger: Logger): Promise<BusAnswer> {
  const options = ask.timeout === 0 ? {} : { timeout: ask.timeout + RELAY_MARGIN_MS, unref: true };
  const answers = await Promise.all(
    Array.from(workers, ([id, rpc]) =>
      (rpc.request(id, REQUEST_ALL_CHANNEL, ask, options) as Promise<BusAnswer>).catch((err: unknown) => {
        logger.warn(
          { err, worker: id, topic: ask.topic },
          'app.requestAll() from another server: a worker did not answer; its subscribers are in neither list',
        );
        return null;
      }),
    ),
  );
  const joined: BusAnswer = { replies: [], missing: [] };
  for (const a of answers) if (a !== null) joined.replies.push(...a.replies), joined.missing.push(...a.missing);
  return joined;
}
