// app.requestAll(topic, event, data): one server → client request (requests.ts) to every
// subscriber of a topic in this process, the data serialized once, and every answer
// collected: an acknowledged broadcast. The other workers of a cluster() are asked by the App
// (app/request-all-workers.ts), the other servers of a broker bus by the bus
// (bus/broker/request-all-exchange.ts).
import { requestEncoded, type Socket } from './socket.ts';
import { SocketRequestError, type SocketRequestErrorCode } from './requests.ts';
import type { BusAnswer } from './bus/bus.ts';

export interface RequestAllResult<Reply = unknown> {
  /**
   * The subscribers that answered, in no particular order. `id` names the socket, unique across
   * the workers of a cluster and the servers of a bus: `"<worker>:<ws.id>"` (`"0:<ws.id>"`
   * outside a cluster), `"<server>:<worker>:<ws.id>"` with a Redis or NATS bus (`server`: 12
   * hex digits naming the process, shared by its workers).
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
  prefix: string,
): Promise<RequestAllResult<Reply>> {
  const asked = [...subscribers];
  const settled = await Promise.allSettled(asked.map((s) => requestEncoded<Reply>(s, event, json, ms)));
  const result: RequestAllResult<Reply> = { replies: [], missing: [] };
  for (let i = 0; i < asked.length; i++) {
    const id = prefix + asked[i]!.id;
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

/** A result as it crosses threads or the bus: errors as `{ code, message }` (a structured clone or JSON drops their class). */
export function toBusAnswer(result: RequestAllResult): BusAnswer {
  return { replies: result.replies, missing: result.missing.map((m) => ({ id: m.id, code: m.error.code, message: m.error.message })) };
}

/** Adds another thread's or server's answer to `result`, errors made SocketRequestErrors again. */
export function mergeAnswer<Reply>(result: RequestAllResult<Reply>, answer: BusAnswer, event: string): void {
  for (const r of answer.replies) result.replies.push({ id: r.id, data: r.data as Reply });
  for (const m of answer.missing)
    result.missing.push({ id: m.id, error: new SocketRequestError(m.code as SocketRequestErrorCode, event, m.message) });
}
