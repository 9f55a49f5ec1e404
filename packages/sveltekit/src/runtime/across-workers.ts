// platform.send(userId) and platform.sendTo(filter) under WORKERS: the sockets held by the
// other worker threads, reached through the cluster's public request/reply (app.cluster.request
// and app.cluster.handle, docs/cluster.md). A user id and a message cross threads as they are;
// a filter cannot (a function, often a closure over the request), so sendTo asks each other
// worker for its sockets' ids and data, runs the filter here, then sends the message to the ids
// it picked: two hops, and a socket that closed in between is skipped. Each worker answers
// from its hooks.ws route's registry; the handlers are set at install, before the app serves,
// so a replaced worker answers as soon as it takes connections.
import type { App } from '@tachyon/server';
import { deliver, type SocketRegistry } from './sockets.ts';

const SEND = '__tachyon.sveltekit.send';
const LIST = '__tachyon.sveltekit.sockets';
const SEND_TO = '__tachyon.sveltekit.sendTo';

/** A socket of another worker as sendTo's filter sees it: its id there and its `ws.data`. */
interface Listed {
  id: number;
  data: unknown;
}

/** Answers the other workers' send / sendTo with this worker's sockets (no-op outside a cluster of 2+). */
export function serveOtherWorkers(app: App, registry: SocketRegistry): void {
  if (app.cluster.workers <= 1) return;
  app.cluster.handle(SEND, (ask: { user: string; message: string }) => {
    let n = 0;
    for (const ws of registry.ofUser(ask.user)) n += deliver(ws, ask.message);
    return n;
  });
  app.cluster.handle(LIST, (): Listed[] => Array.from(registry.all, (ws) => ({ id: ws.id, data: ws.data })));
  app.cluster.handle(SEND_TO, (ask: { ids: number[]; message: string }) => {
    const want = new Set(ask.ids);
    let n = 0;
    for (const ws of registry.all) if (want.has(ws.id)) n += deliver(ws, ask.message);
    return n;
  });
  registry.shared = true;
}

/** The other workers' ids (none outside a cluster, or when this app has no hooks.ws route). */
function others(app: App, registry: SocketRegistry): number[] {
  const out: number[] = [];
  if (!registry.shared) return out;
  const { worker, workers } = app.cluster;
  for (let w = 1; w <= workers; w++) if (w !== worker) out.push(w);
  return out;
}

function warn(app: App, err: unknown, worker: number, what: string): void {
  app.logger.warn({ err, worker }, `event.platform.${what}(): worker ${worker} did not take the message`);
}

/** Sends `message` to user `user`'s sockets on every other worker (not awaited: order per worker is kept). */
export function sendToUserElsewhere(app: App, registry: SocketRegistry, user: string, message: string): void {
  for (const w of others(app, registry)) app.cluster.request(w, SEND, { user, message }).catch((err: unknown) => warn(app, err, w, 'send'));
}

/** Runs `filter` over the other workers' sockets (their data; no Socket object) and sends `message` to those it picks. */
export function sendToFilteredElsewhere<Data>(
  app: App,
  registry: SocketRegistry,
  filter: (data: Data, ws: undefined) => boolean,
  message: string,
): void {
  for (const w of others(app, registry))
    app.cluster
      .request<Listed[]>(w, LIST)
      .then((listed) => {
        const ids: number[] = [];
        for (const s of listed) if (filter(s.data as Data, undefined)) ids.push(s.id);
        return ids.length === 0 ? 0 : app.cluster.request(w, SEND_TO, { ids, message });
      })
      .catch((err: unknown) => warn(app, err, w, 'sendTo'));
}
