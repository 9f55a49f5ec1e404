// What the primary and its workers say to each other (through the Worker's message port),
// and what a worker is given at birth (workerData). Internal to src/cluster/.
import type { MessagePort } from 'node:worker_threads';
import type { RpcMessage } from '../core/rpc.ts';
import type { BytesNote } from './static-bytes.ts';

/** workerData key marking a thread as a cluster worker, so cluster() runs the factory there. */
export const WORKER_MARK = '__tachyonClusterWorker';

export type ShareMode = 'acceptor' | 'reuseport';

export interface WorkerData {
  id: number;
  workers: number;
  port: number;
  host: string;
  mode: ShareMode;
  tls: boolean;
  /** Int32Array over it: open WebSocket connections per worker id. */
  connections: SharedArrayBuffer;
  /** Int32Array over it: a counter per worker id each worker bumps while its event loop turns. */
  heartbeats: SharedArrayBuffer;
  heartbeatEvery: number;
  /** 6 random bytes shared by the workers of this process (their broker buses' origins, thread-bus.ts). */
  processId: Uint8Array;
  /** The primary relays to a broker (cluster({ bus })): a 'relay' port follows. */
  relay: boolean;
  /** With relay: the relay bus's name for this process in app.requestAll() ids. */
  server?: string | undefined;
}

export type ToWorker =
  | { type: 'peer'; id: number; port: MessagePort }
  | { type: 'peer-gone'; id: number }
  /** This worker's port to the primary's broker relay (relay.ts). */
  | { type: 'relay'; port: MessagePort }
  | { type: 'close'; timeout: number }
  /** Out of the acceptor to be replaced (drain.ts): close as 'close' does, WebSockets with 1012. */
  | { type: 'drain'; timeout: number }
  /** Taken out of the acceptor after a fatal error: drop every connection and exit (leave.ts). */
  | { type: 'abort' }
  /** The answer to 'leaving': out of the acceptor; no socket is queued for this worker any more. */
  | { type: 'released' }
  /** Requests and replies: history, metrics, static bytes (core/rpc.ts; no `type` key). */
  | RpcMessage;

export type FromWorker =
  /**
   * Started; `descriptor` is for the acceptor (absent in reuseport mode: the worker listens
   * itself). `released`: an Int32Array over it; the primary sets [0] to 1 (and notifies) once
   * it has taken the descriptor out of the acceptor after a 'leaving'.
   */
  | { type: 'ready'; descriptor?: number; released?: SharedArrayBuffer }
  /**
   * The worker is ending on its own (process.exit() in the app): take it out of the acceptor,
   * then answer 'released' and set the `released` flag. The worker drops its connections and
   * ends after the answer (leave.ts); an exit that bypassed leave.ts waits on the flag in its
   * 'exit' handler (Atomics.wait: no loop turn there). Otherwise the acceptor may hand a socket
   * to the freed uWS loop.
   */
  | { type: 'leaving' }
  /** The factory or the start failed. */
  | { type: 'failed'; error: unknown }
  /** An uncaught exception or unhandled rejection after the start. */
  | { type: 'fatal'; error: unknown }
  | { type: 'closed' }
  | BytesNote
  | RpcMessage;
