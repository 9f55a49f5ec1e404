// The worker side of cluster(): the same module the primary runs, started in a worker thread.
// It runs the factory, starts the App without a listen socket (the primary's acceptor hands it
// connections) or, in reuseport mode, listening itself; then it serves until the primary says
// close. Uncaught errors are reported to the primary, which replaces this worker.
import { parentPort } from 'node:worker_threads';
import { App } from '../app/app.ts';
import { withClusterMember, type ClusterMember } from '../app/cluster-member.ts';
import type { Server } from '../app/server.ts';
import { isRpcMessage, Rpc } from '../core/rpc.ts';
import type { FromWorker, ToWorker, WorkerData } from './protocol.ts';
import { ThreadBus } from './thread-bus.ts';
import { WorkerByteStore } from './static-bytes.ts';
import { WorkerMetrics } from './metrics-exchange.ts';
import { WorkerHistoryStore } from './history-exchange.ts';
import { WorkerKeys } from './once-exchange.ts';
import { askThroughRelay } from './relay-request-all.ts';
import { installByteStore } from '../serving/static/shared-bytes.ts';
import { closeAndLeave, installExit, leave, RELEASE_TIMEOUT } from './leave.ts';

export type AppFactory = () => App | Promise<App>;

export interface WorkerStats {
  /** Messages this worker sent to and received from the others (thread-bus.ts). */
  readonly sent: number;
  readonly received: number;
  readonly relayed: number;
  /** Static files it loaded itself, and files it took from another worker (static-bytes.ts). */
  readonly staticMade: number;
  readonly staticShared: number;
}

let stats: (() => WorkerStats) | undefined;

/** This thread's cluster traffic, when it is a cluster worker (diagnostics: the cluster tests read it). */
export function workerStats(): WorkerStats | undefined {
  return stats?.();
}

/** Never settles: in a worker, the code after `await cluster(...)` does not run (it is the primary's). */
export async function runWorker(data: WorkerData, factory: AppFactory): Promise<never> {
  const parent = parentPort!;
  const post = (message: FromWorker) => {
    try {
      parent.postMessage(message);
    } catch {
      // An error that cannot be cloned (functions in it): send what can be.
      const error = (message as { error?: unknown }).error;
      parent.postMessage({ ...message, error: new Error(error instanceof Error ? error.message : String(error)) });
    }
  };
  const bus = new ThreadBus(data.id, new Int32Array(data.connections), data.processId);
  // Requests to the primary (peer 0): history, metrics, static bytes (core/rpc.ts).
  const primary = new Rpc(data.id, (_to, message) => {
    parent.postMessage(message);
    return true;
  });
  // app.static() files: held once for the whole cluster (static-bytes.ts).
  const bytes = new WorkerByteStore(primary, (note) => parent.postMessage(note));
  installByteStore(bytes);
  // metrics(): a scrape on this worker gathers the others' through the primary (metrics-exchange.ts).
  const metrics = new WorkerMetrics(data.id, data.workers, primary);
  // History topics: the memory store lives in the primary, for every worker (history-exchange.ts).
  const history = new WorkerHistoryStore(primary);
  stats = () => ({ ...bus.stats, staticMade: bytes.stats.made, staticShared: bytes.stats.shared });
  // What the cluster's App joins (app.joinCluster): the first App the factory builds, or the
  // one it returns if that was built outside it. Only that App is the cluster's.
  let joined = false;
  // The App's requests between workers (app.cluster.request()/handle()), once it connects.
  let peers: Rpc | undefined;
  const member: ClusterMember = {
    worker: data.id,
    workers: data.workers,
    history: data.relay ? undefined : history,
    keys: new WorkerKeys(primary),
    bus(own) {
      joined = true;
      if (own !== undefined && data.relay)
        throw new Error(
          'cluster({ bus }) relays for every worker: the App must not have a bus option too (pick one, docs/cluster.md "With a broker")',
        );
      if (own !== undefined) bus.compose(own);
      return bus;
    },
    connect(requests) {
      // app.cluster.request()/handle(): over the same ports as the bus, worker to worker.
      peers = requests;
      requests.connect(data.id, (to, message) => bus.message(to, message));
      bus.onMessage = (from, message) => requests.receive(from, message);
      bus.onPeerGone = (id) => requests.peerGone(id);
      // The primary relays: app.requestAll() reaches the other servers through it.
      if (data.relay) {
        bus.server = data.server;
        bus.askAll = (ask) => askThroughRelay(requests, ask);
      }
    },
    drain: (id) => primary.request(0, 'drain', id).then(() => undefined),
    linkMetrics(collect) {
      metrics.provide(collect);
      return (timeout) => metrics.gather(timeout);
    },
  };
  const beats = new Int32Array(data.heartbeats);
  setInterval(() => Atomics.add(beats, data.id, 1), data.heartbeatEvery).unref();
  // After the start, a throw nobody caught ends this worker: the primary logs and replaces it,
  // and tells the other workers it is gone. So from that throw on, their requests get no
  // answer from this worker's suspect state (they get WORKER_GONE from the primary's word),
  // though it runs until the primary's abort arrives.
  let started = false;
  const fatal = (error: unknown) => {
    if (started) peers?.close();
    post({ type: started ? 'fatal' : 'failed', error });
  };
  process.on('uncaughtException', fatal);
  process.on('unhandledRejection', fatal);

  let server: Server | undefined;
  let app: App | undefined;
  // A worker thread that ends while uWS holds sockets aborts the whole process (Node finds
  // uWS's poll handles still open). So a worker that ends drops its connections first: through
  // leave() (leave.ts) on an abort from the primary or process.exit() from the app, and in the
  // 'exit' handler for an exit that bypassed both. Each call drops what arrived since the last.
  const drop = () => {
    try {
      app?.abort();
    } catch {}
  };
  // Set by the primary once this worker is out of its acceptor (see 'leaving' in protocol.ts).
  const released = new Int32Array(new SharedArrayBuffer(4));
  let onReleased: (() => void) | undefined;
  // In the acceptor, and the primary has not taken it out yet (it does before 'abort' and 'close').
  let accepting = false;
  // Node's own process.exit; the app's process.exit starts leave() once serving (installExit).
  let nodeExit = process.exit.bind(process) as (code?: number) => never;
  let leaving = false;
  /** Ends this worker in uWS's order (leave.ts), once; `code` undefined: process.exitCode, as process.exit() uses. */
  const depart = (code?: number) => {
    if (leaving) return;
    leaving = true;
    void leave({
      release: accepting
        ? () =>
            new Promise<void>((resolve) => {
              onReleased = resolve;
              post({ type: 'leaving' });
            })
        : undefined,
      drop,
      exit: () => {
        accepting = false; // released, or the primary did not answer in time: nothing to wait for
        // Not nodeExit(undefined): Node's exit counts its arguments, and that one would reset the code to 0.
        if (code === undefined) nodeExit();
        else nodeExit(code);
      },
    });
  };
  process.on('exit', () => {
    if (accepting) {
      accepting = false;
      // An exit that bypassed leave() (Node's process.exit, kept from before cluster() ran):
      // the thread and its uWS loop end when this handler returns, and the primary's acceptor
      // may be handing it a socket right now. Wait (synchronously: nothing else can run here)
      // until the primary has removed it. Sockets it queued just before are still adopted as
      // the thread ends, and may abort the process: only leave() drops those (leave.ts).
      parent.postMessage({ type: 'leaving' } satisfies FromWorker);
      Atomics.wait(released, 0, 0, RELEASE_TIMEOUT);
    }
    drop();
  });
  parent.on('message', (message: ToWorker) => {
    if (isRpcMessage(message)) primary.receive(0, message);
    else if (message.type === 'peer') bus.addPeer(message.id, message.port);
    else if (message.type === 'peer-gone') bus.removePeer(message.id);
    else if (message.type === 'relay') bus.addRelay(message.port);
    else if (message.type === 'released') {
      accepting = false;
      onReleased?.();
    } else if (message.type === 'abort') {
      accepting = false; // the primary took it out before sending this
      depart(1);
    } else if (message.type === 'close' || message.type === 'drain') {
      accepting = false; // the primary took it out before sending this
      if (leaving) return;
      leaving = true;
      void closeAndLeave(
        () => server?.close({ timeout: message.timeout, restart: message.type === 'drain' }),
        drop,
        (error) => post({ type: 'fatal', error }),
        () => {
          post({ type: 'closed' }); // delivered before the thread's 'exit' event
          nodeExit(0);
        },
      );
    }
  });

  try {
    app = await withClusterMember(member, factory);
    if (!(app instanceof App)) throw new TypeError('cluster(): the factory must return an App');
    if (!joined) app.joinCluster(member);
    else if (app.worker !== data.id) throw new Error('cluster(): the factory must return the first App it created in the worker');
    if (app.tls !== data.tls)
      throw new Error(
        `cluster(): ${data.tls ? 'cluster({ tls }) is set but the App has no tls option' : 'the App has a tls option: give cluster() the same tls'}`,
      );
    if (data.mode === 'acceptor') {
      const handedTo = await app.startForAcceptor(data.port, data.host);
      server = handedTo.server;
      accepting = true;
      post({ type: 'ready', descriptor: handedTo.descriptor, released: released.buffer as SharedArrayBuffer });
    } else {
      server = await app.listenShared(data.port, data.host);
      post({ type: 'ready' });
    }
    started = true;
    // From now on the app's process.exit() leaves in uWS's order instead of ending the thread
    // in this turn; it returns to its caller (docs/cluster.md, Faults).
    nodeExit = installExit(() => depart());
  } catch (error) {
    post({ type: 'failed', error });
  }
  return new Promise<never>(() => {});
}
