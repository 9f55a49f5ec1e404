// The primary thread of a cluster: one acceptor listening on the port (or, in reuseport mode,
// none: the workers listen themselves), N worker threads running the same module, the
// MessagePort mesh between them (thread-bus.ts), and their supervision: a worker that throws,
// exits or stalls is logged, taken out of the acceptor and replaced after a backoff; the
// others are untouched. close() stops accepting and lets every worker drain.
import { MessageChannel, Worker } from 'node:worker_threads';
import type { Acceptor } from '../app/acceptor.ts';
import type { ResolvedClusterOptions } from './options.ts';
import { ByteRegistry } from './static-bytes.ts';
import { gatherMetrics } from './metrics-exchange.ts';
import { BrokerRelay } from './relay.ts';
import { randomBytes } from 'node:crypto';
import { serveHistory } from './history-exchange.ts';
import { KeyTable, serveKeys } from './once-exchange.ts';
import { isRpcMessage, Rpc } from '../core/rpc.ts';
import { drainRefusal } from './drain.ts';
import { MemoryHistoryStore } from '../realtime/history/memory.ts';
import { WORKER_MARK, type FromWorker, type ShareMode, type ToWorker, type WorkerData } from './protocol.ts';

/** Backoff stops growing here; a worker that stayed up this long starts over from the first delay. */
const MAX_RESTART_DELAY = 30_000;
const HEALTHY_UPTIME = 30_000;

interface Slot {
  readonly id: number;
  worker: Worker | null;
  /** Requests to and from this worker (history, metrics, static bytes); a new one per thread. */
  rpc: Rpc | null;
  descriptor: number | undefined;
  ready: boolean;
  startedAt: number;
  /** Consecutive deaths, for the backoff. */
  crashes: number;
  lastBeat: number;
  lastBeatAt: number;
  restartTimer: NodeJS.Timeout | undefined;
  onClosed: (() => void) | undefined;
  /** Being drained (drain.ts): out of the acceptor, closing, replaced once closed. */
  draining: boolean;
}

export class Primary {
  private readonly slots: Slot[] = [];
  private readonly connections = new Int32Array(new SharedArrayBuffer(4 * 1025));
  private readonly heartbeats = new Int32Array(new SharedArrayBuffer(4 * 1025));
  private readonly heartbeatEvery: number;
  private readonly watchdog: NodeJS.Timeout | undefined;
  private closing = false;
  /** app.static() bytes shared by the workers. */
  private readonly bytes = new ByteRegistry();
  /** History topics' memory store, one for every worker (history-exchange.ts). */
  private readonly history = new MemoryHistoryStore();
  /** Idempotency keys of every worker: a retried request runs once in the cluster (once-exchange.ts). */
  private readonly keys = new KeyTable();
  /** Settles when close() starts: pending metrics scrapes answer with what arrived. */
  private readonly closingStarted: Promise<void>;
  private startClosing!: () => void;
  /** Stalled workers replaced but still running (see retire()). */
  private readonly abandoned = new Set<Worker>();
  private readonly o: ResolvedClusterOptions;
  readonly mode: ShareMode;
  readonly port: number;
  /** Null in reuseport mode: the workers listen themselves. */
  private readonly acceptor: Acceptor | null;
  private readonly entry: string | URL;
  /** cluster({ bus }): the one broker connection, relaying for every worker (relay.ts). */
  private readonly relay: BrokerRelay | undefined;
  /** Shared by this process's workers: their broker buses drop each other's echoes. */
  private readonly processId = new Uint8Array(randomBytes(6));

  constructor(o: ResolvedClusterOptions, mode: ShareMode, port: number, acceptor: Acceptor | null, entry: string | URL) {
    this.o = o;
    this.mode = mode;
    this.port = port;
    this.acceptor = acceptor;
    this.entry = entry;
    this.closingStarted = new Promise<void>((resolve) => (this.startClosing = resolve));
    for (let id = 1; id <= o.workers; id++) {
      this.slots.push({
        id,
        worker: null,
        rpc: null,
        descriptor: undefined,
        ready: false,
        startedAt: 0,
        crashes: 0,
        lastBeat: 0,
        lastBeatAt: 0,
        restartTimer: undefined,
        onClosed: undefined,
        draining: false,
      });
    }
    this.relay = o.bus === undefined ? undefined : new BrokerRelay(o.bus, o.logger);
    this.heartbeatEvery = o.stallTimeout > 0 ? Math.max(10, Math.min(1000, Math.floor(o.stallTimeout / 4))) : 1000;
    if (o.stallTimeout > 0) this.watchdog = setInterval(() => this.checkStalls(), this.heartbeatEvery).unref();
  }

  /** Starts every worker; rejects with the first failure (the caller closes the rest). */
  async start(): Promise<void> {
    await this.relay?.start();
    await Promise.all(this.slots.map((slot) => this.spawn(slot)));
  }

  /** Open WebSocket connections over all workers. */
  get openConnections(): number {
    let total = 0;
    for (let i = 0; i < this.connections.length; i++) total += Atomics.load(this.connections, i);
    return total;
  }

  private spawn(slot: Slot): Promise<void> {
    const data: WorkerData = {
      id: slot.id,
      workers: this.o.workers,
      port: this.port,
      host: this.o.host,
      mode: this.mode,
      tls: this.o.tls !== undefined,
      connections: this.connections.buffer as SharedArrayBuffer,
      heartbeats: this.heartbeats.buffer as SharedArrayBuffer,
      heartbeatEvery: this.heartbeatEvery,
      processId: this.processId,
      relay: this.relay !== undefined,
      server: this.relay?.server,
    };
    const worker = new Worker(this.entry, { workerData: { [WORKER_MARK]: data } });
    const rpc = this.connect(worker, slot.id);
    Object.assign(slot, { worker, rpc, descriptor: undefined, ready: false, startedAt: Date.now(), onClosed: undefined });
    // The mesh: a direct port between the new worker and every other live one.
    for (const other of this.slots) {
      if (other === slot || other.worker === null) continue;
      const { port1, port2 } = new MessageChannel();
      this.tell(worker, { type: 'peer', id: other.id, port: port1 }, [port1]);
      this.tell(other.worker, { type: 'peer', id: slot.id, port: port2 }, [port2]);
    }
    if (this.relay !== undefined) {
      const { port1, port2 } = new MessageChannel();
      this.relay.attach(slot.id, port1);
      this.tell(worker, { type: 'relay', port: port2 }, [port2]);
    }
    // The worker's flag for 'leaving' (release()).
    let released: Int32Array | undefined;
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const fail = (error: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.retire(slot, worker, 'terminate');
        reject(error);
      };
      const timer =
        this.o.startTimeout > 0
          ? setTimeout(
              () => fail(new Error(`cluster: worker ${slot.id} did not start within ${this.o.startTimeout} ms`)),
              this.o.startTimeout,
            )
          : undefined;
      worker.on('message', (message: FromWorker) => {
        if (isRpcMessage(message))
          rpc.receive(slot.id, message); // closed once the worker is retired
        else if (message.type === 'leaving') this.release(slot, worker, released);
        else if (message.type === 'ready') {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          slot.ready = true;
          slot.lastBeat = Atomics.load(this.heartbeats, slot.id);
          slot.lastBeatAt = Date.now();
          slot.descriptor = message.descriptor;
          if (message.released !== undefined) released = new Int32Array(message.released);
          if (message.descriptor !== undefined && !this.closing) this.acceptor?.add(message.descriptor);
          this.o.logger.debug({ worker: slot.id, threadId: worker.threadId }, 'worker started');
          resolve();
        } else if (message.type === 'failed') fail(asError(message.error));
        else if (message.type === 'fatal') this.died(slot, worker, asError(message.error), 'uncaught exception', 'abort');
        else if (message.type === 'closed' && slot.worker === worker) slot.onClosed?.();
        else if (message.type === 'bytes-put' || message.type === 'bytes-failed') {
          if (slot.worker === worker) this.bytes.note(message);
        }
      });
      worker.on('error', (err) => (settled ? this.died(slot, worker, err, 'uncaught exception', 'gone') : fail(err)));
      worker.on('exit', (code) => {
        if (!settled) fail(new Error(`cluster: worker ${slot.id} exited (code ${code}) before it started`));
        // A drained worker ends its own thread with 0 once closed (leave.ts): expected, not a death.
        else if (!(slot.draining && code === 0)) this.died(slot, worker, undefined, `exited with code ${code}`, 'gone');
        // Not a drained predecessor's late exit: by then the slot holds its replacement.
        if (slot.worker === worker || slot.worker === null) slot.onClosed?.();
      });
    });
  }

  /**
   * The primary's requests with one worker thread: it answers history, static bytes and
   * metrics scrapes, and asks the worker for its metrics. Replies go to that thread only (a
   * replacement starts its request ids over: it must never get its predecessor's replies).
   */
  private connect(worker: Worker, id: number): Rpc {
    const rpc = new Rpc(0, (_to, message) => {
      this.tell(worker, message);
      return true;
    });
    serveHistory(rpc, this.history);
    serveKeys(rpc, this.keys, id);
    this.bytes.serve(rpc);
    rpc.handle('metrics-gather', (timeout: number, from: number) => {
      const others = this.slots.filter((s) => s.ready && s.rpc !== null && s.id !== from).map((s) => ({ id: s.id, rpc: s.rpc! }));
      return gatherMetrics(from, this.o.workers, others, timeout, this.closingStarted);
    });
    rpc.handle('drain', (target: number, from: number) => this.drain(target, from));
    return rpc;
  }

  private tell(worker: Worker, message: ToWorker, transfer?: Transferable[]): void {
    worker.postMessage(message, transfer as never);
  }

  /**
   * Takes a worker out: no new connections, peers forget it. How its thread ends depends on
   * why: uWS aborts the whole process if a thread ends while it holds sockets, so a worker
   * that may hold connections is never terminated from here. `terminate`: it has none (it
   * never started serving, or it closed and is ending its own thread). `abort`: it drops them
   * itself, then exits. `gone`: it already exited. `abandon`: it is stuck and cannot do
   * anything; it gets the abort message and ends when (if) its event loop turns again.
   */
  private retire(slot: Slot, worker: Worker, how: 'terminate' | 'abort' | 'gone' | 'abandon'): void {
    if (slot.worker !== worker) return;
    // First, in this thread: the acceptor must never hand a connection to a loop that is gone.
    if (slot.descriptor !== undefined) this.acceptor?.remove(slot.descriptor);
    slot.descriptor = undefined;
    slot.worker = null;
    slot.ready = false;
    Atomics.store(this.connections, slot.id, 0);
    slot.rpc?.close(); // scrapes waiting for it count it missing
    slot.rpc = null;
    this.bytes.forget(slot.id);
    this.relay?.detach(slot.id);
    this.keys.workerGone(slot.id);
    for (const other of this.slots) if (other.worker !== null) this.tell(other.worker, { type: 'peer-gone', id: slot.id });
    if (how === 'terminate') void worker.terminate();
    else if (how === 'abort' || how === 'abandon') {
      this.tell(worker, { type: 'abort' });
      if (how === 'abandon') {
        this.abandoned.add(worker);
        worker.once('exit', () => this.abandoned.delete(worker));
      }
    }
  }

  /**
   * A worker is ending on its own (process.exit() in the app) and waits for this: take it out
   * of the acceptor now, in this thread (the acceptor's), before its uWS loop is freed. uWS's
   * acceptor hands an accepted socket to a child by deferring onto the child's loop; a freed
   * loop there is a use-after-free (SIGSEGV, or glibc's mutex assertion). Then tell it (the
   * message for cluster/leave.ts, the flag for an 'exit' handler blocked in Atomics.wait). The
   * rest of the retirement waits for the thread's 'exit' event, as for any death.
   */
  private release(slot: Slot, worker: Worker, released: Int32Array | undefined): void {
    if (slot.worker === worker && slot.descriptor !== undefined) {
      this.acceptor?.remove(slot.descriptor);
      slot.descriptor = undefined;
    }
    this.tell(worker, { type: 'released' });
    if (released === undefined) return;
    Atomics.store(released, 0, 1);
    Atomics.notify(released, 0);
  }

  private died(slot: Slot, worker: Worker, err: Error | undefined, how: string, ending: 'abort' | 'gone' | 'abandon'): void {
    if (slot.worker !== worker || this.closing) return;
    this.o.logger.error({ worker: slot.id, err, uptime: Date.now() - slot.startedAt }, `worker ${how}: replacing it`);
    this.retire(slot, worker, ending);
    this.restart(slot);
  }

  private restart(slot: Slot): void {
    if (this.closing) return;
    if (Date.now() - slot.startedAt > HEALTHY_UPTIME) slot.crashes = 0;
    const delay = Math.min(MAX_RESTART_DELAY, this.o.restartDelay * 2 ** slot.crashes);
    slot.crashes++;
    this.o.logger.info({ worker: slot.id, delay, attempt: slot.crashes }, 'restarting worker');
    slot.restartTimer = setTimeout(() => {
      slot.restartTimer = undefined;
      if (this.closing) return;
      this.spawn(slot).catch((err: unknown) => {
        this.o.logger.error({ worker: slot.id, err }, 'worker failed to restart');
        this.restart(slot);
      });
    }, delay);
  }

  /**
   * Drains worker `id` (drain.ts) and resolves once its replacement serves; asked by worker
   * `from` (0: the primary's own code), which, when it is the drained one, hears only that
   * the drain started: it is closing.
   */
  async drain(id: number, from: number): Promise<void> {
    const refusal = drainRefusal(
      this.slots.map((s) => ({ id: s.id, serving: s.ready && s.worker !== null, draining: s.draining })),
      id,
      this.closing,
    );
    if (refusal !== undefined) throw new Error(refusal);
    const slot = this.slots[id - 1]!;
    const worker = slot.worker!;
    slot.draining = true;
    this.o.logger.info({ worker: id, by: from }, 'draining worker: it closes (WebSockets 1012) and a fresh one takes its place');
    // Out of the acceptor first, in this thread (the acceptor's): no connection is queued for it from now on.
    if (slot.descriptor !== undefined) this.acceptor?.remove(slot.descriptor);
    slot.descriptor = undefined;
    let timer: NodeJS.Timeout | undefined;
    const closed = new Promise<void>((resolve) => {
      slot.onClosed = resolve;
      // The worker bounds its own drain by the shutdown timeout; this only guards against one that hangs.
      timer = setTimeout(resolve, this.o.shutdownTimeout + 2000);
    });
    // A worker that drains itself gets the answer while it drains: its request is in flight.
    this.tell(worker, { type: 'drain', timeout: this.o.shutdownTimeout });
    const replaced = closed.then(async () => {
      clearTimeout(timer);
      slot.draining = false;
      if (this.closing) return;
      // Died while draining: died() logged it and replaces it after the crash backoff.
      if (slot.worker !== worker) throw new Error(`worker ${id} died while draining; it is restarted as after a crash`);
      this.retire(slot, worker, 'terminate');
      slot.crashes = 0;
      await this.spawn(slot).catch((err: unknown) => {
        this.o.logger.error({ worker: id, err }, 'drained worker failed to restart');
        this.restart(slot);
        throw err;
      });
      this.o.logger.info({ worker: id }, 'drained worker replaced');
    });
    if (from !== id) return replaced;
    replaced.catch(() => {}); // logged above; the asking worker is gone by then
  }

  private checkStalls(): void {
    const now = Date.now();
    for (const slot of this.slots) {
      if (!slot.ready || slot.worker === null) continue;
      const beat = Atomics.load(this.heartbeats, slot.id);
      if (beat !== slot.lastBeat) {
        slot.lastBeat = beat;
        slot.lastBeatAt = now;
      } else if (now - slot.lastBeatAt > this.o.stallTimeout) {
        this.died(slot, slot.worker, new Error(`event loop stuck for more than ${this.o.stallTimeout} ms`), 'stalled', 'abandon');
      }
    }
  }

  /** Stops accepting; each worker finishes its in-flight requests, closes its WebSockets (1001) and ends. */
  async close(timeout: number): Promise<void> {
    this.closing = true;
    clearInterval(this.watchdog);
    this.acceptor?.close();
    this.startClosing();
    await Promise.all(
      this.slots.map(async (slot) => {
        clearTimeout(slot.restartTimer);
        const worker = slot.worker;
        if (worker === null) return;
        const closed = new Promise<void>((resolve) => (slot.onClosed = resolve));
        if (slot.ready) this.tell(worker, { type: 'close', timeout });
        else slot.onClosed?.(); // still starting: nothing in flight
        let timer: NodeJS.Timeout | undefined;
        // The worker bounds its own drain by `timeout`; this only guards against one that hangs.
        await Promise.race([closed, new Promise<void>((r) => (timer = setTimeout(r, timeout + 2000)))]);
        clearTimeout(timer);
        slot.worker = null;
        Atomics.store(this.connections, slot.id, 0);
        // Closed: it is ending its own thread (leave.ts), this only waits for that. Hung: stopped here.
        await worker.terminate();
      }),
    );
    await this.relay?.close();
    this.o.logger.info({ port: this.port }, 'cluster closed');
  }
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
