// app.requestAll(topic, event, data): one server → client request (requests.ts) to every
// subscriber of a topic in this process, the data serialized once, and every answer
// collected: an acknowledged broadcast. The other workers of a cluster() are asked by the App
// (app/request-all-workers.ts); servers on a bus (Redis, NATS) are not: future work.
import { requestEncoded, type Socket } from './socket.ts';
import { SocketRequestError } from './requests.ts';

export interface RequestAllResult<Reply = unknown> {
  /**
   * The subscribers that answered, in no particular order. `id` names the socket, unique across
   * the workers of a cluster: `"<worker>:<ws.id>"` (`"0:<ws.id>"` outside a cluster).
   */
  replies: { id: string; data: Reply }[];
  /** The subscribers that did not answer: why (TIMEOUT, CLOSED, CLIENT_ERROR, NO_HANDLER, ...). */
  missing: { id: string; error: SocketRequestError }[];
}

/** Asks each socket (a snapshot taken now) and waits until every request settled. */
export async function requestAll<Reply>(
  subscribers: Iterable<Socket<any>>,
  event: string,
  json: string | undefined,
  ms: number,
  worker: number,
): Promise<RequestAllResult<Reply>> {
  const asked = [...subscribers];
  const settled = await Promise.allSettled(asked.map((s) => requestEncoded<Reply>(s, event, json, ms)));
  const result: RequestAllResult<Reply> = { replies: [], missing: [] };
  for (let i = 0; i < asked.length; i++) {
    const id = `${worker}:${asked[i]!.id}`;
    const outcome = settled[i]!;
    if (outcome.status === 'fulfilled') result.replies.push({ id, data: outcome.value });
    else {
      const error =
        outcome.reason instanceof SocketRequestError
          ? outcome.reason
          : new SocketRequestError('CLIENT_ERROR', event, String(outcome.reason));
      result.missing.push({ id, error });
    }
  }
  return result;
}
