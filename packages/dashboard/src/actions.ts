// What an operator may do from the page when dashboard({ actions: true }): disconnect a socket
// (on whichever worker holds it) and drain a cluster worker (app.cluster.drain(): it finishes
// its requests, its clients reconnect to the other workers and a fresh one takes its place).
// Both are events on the page's WebSocket, each logged with the operator's address. Off, the
// page is read-only and every action is refused with 403.
import { type App, HttpError, type Socket } from '@tachyon/server';

/** The close code of a socket disconnected from the page: 1008 (policy), which @tachyon/client does not retry. */
export const DISCONNECT_CODE = 1008;

type PageSocket = Socket<{ ip: string }>;

/** Closes this worker's socket `id`; false when it has none (already gone, or another worker's). */
export function disconnectHere(app: App, id: number): boolean {
  for (const s of app.sockets()) {
    if (s.id !== id) continue;
    s.close(DISCONNECT_CODE, 'disconnected from the dashboard');
    return true;
  }
  return false;
}

/** `worker` from an operator's frame, checked: a whole number naming a worker of this app. */
function workerOf(app: App, worker: unknown, what: string): number {
  if (!Number.isInteger(worker)) throw new HttpError(400, `${what} needs { worker }: a whole number`, { expose: true });
  const workers = app.cluster.workers;
  const w = worker as number;
  if (workers === 0 ? w !== 0 : w < 1 || w > workers)
    throw new HttpError(400, `no worker ${w} (${workers === 0 ? 'only 0 outside a cluster' : `1 to ${workers}`})`, { expose: true });
  return w;
}

/** The page's action events; `channel` is the dashboard's cluster channel (a disconnect on another worker). */
export function actionEvents(app: App, actions: boolean, channel: string) {
  const allowed = () => {
    if (!actions) throw new HttpError(403, 'actions are off (dashboard({ actions: true }) turns them on)', { expose: true });
  };
  return {
    disconnect: {
      handler: async (ws: PageSocket, data: unknown) => {
        allowed();
        const { worker: asked, id } = (data ?? {}) as { worker?: unknown; id?: unknown };
        if (!Number.isInteger(asked) || !Number.isInteger(id) || (id as number) < 1)
          throw new HttpError(400, 'disconnect needs { worker, id }: whole numbers', { expose: true });
        const worker = workerOf(app, asked, 'disconnect');
        let closed: boolean;
        try {
          closed =
            worker === app.worker
              ? disconnectHere(app, id as number)
              : await app.cluster.request<boolean>(worker, channel, { op: 'disconnect', id });
        } catch (err) {
          throw new HttpError(503, `worker ${worker} did not answer: ${(err as Error).message}`, { expose: true, cause: err });
        }
        app.logger.info({ worker, socket: id, closed, by: ws.data.ip }, 'dashboard: socket disconnected by an operator');
        return { closed };
      },
    },
    drain: {
      // Answered once the fresh worker serves; draining the worker this page is on closes the
      // page's socket too (1012), and the page reconnects to another worker.
      handler: async (ws: PageSocket, data: unknown) => {
        allowed();
        const worker = workerOf(app, (data as { worker?: unknown } | null)?.worker, 'drain');
        app.logger.info({ worker, by: ws.data.ip }, 'dashboard: worker drain asked by an operator');
        try {
          await app.cluster.drain(worker);
        } catch (err) {
          throw new HttpError(409, (err as Error).message, { expose: true, cause: err });
        }
        return { drained: worker };
      },
    },
  };
}
