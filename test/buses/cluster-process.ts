// A cluster() process on a broker (cluster-server.ts) driven from a test: start it, read its
// log, ask its primary's relay for its counters, put a client on each of its workers.
import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { connect, type Live } from '@tachyon/client';

const SERVER = fileURLToPath(new URL('./cluster-server.ts', import.meta.url));
export type Mode = 'per-worker' | 'primary' | 'both';
export type Kind = 'redis' | 'nats';

export interface Stats {
  worker: number;
  ready: boolean;
  thread: { sent: number; received: number; relayed: number };
  broker: { connected: boolean; received: number; delivered: number; topics: number } | null;
}

/** One cluster process (cluster-server.ts): its port, its primary's relay stats, its log. */
export class ClusterProcess {
  readonly log: any[] = [];
  port = 0;
  private readonly proc: ChildProcess;
  private next = 1;
  private readonly waiting = new Map<number, (v: any) => void>();
  private constructor(proc: ChildProcess) {
    this.proc = proc;
  }
  static start(kind: Kind, mode: Mode, url: string, env: Record<string, string> = {}): Promise<ClusterProcess> {
    const proc = fork(SERVER, [], {
      env: { ...process.env, KIND: kind, MODE: mode, URL: url, WORKERS: '2', ...env },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const cp = new ClusterProcess(proc);
    proc.on('message', (m: { id: number; result: unknown }) => (cp.waiting.get(m.id)?.(m.result), cp.waiting.delete(m.id)));
    return new Promise((resolve, reject) => {
      let buffered = '';
      const read = (d: Buffer) => {
        buffered += d.toString();
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          let parsed: any = line;
          try {
            parsed = JSON.parse(line);
          } catch {}
          cp.log.push(parsed);
          if (parsed?.ready !== undefined) {
            cp.port = parsed.ready;
            resolve(cp);
          }
        }
      };
      proc.stdout!.on('data', read);
      proc.stderr!.on('data', read);
      proc.once('exit', (code) => reject(new Error(`cluster exited with ${code}:\n${cp.log.map((l) => JSON.stringify(l)).join('\n')}`)));
    });
  }
  /** The primary's relay bus counters (primary mode), null otherwise. */
  relayStats(): Promise<Stats['broker']> {
    const id = this.next++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.proc.send({ id, op: 'stats' });
    });
  }
  /** One client on each worker, by worker id (connections are dealt round-robin). */
  async clients(): Promise<Map<number, Live>> {
    const byWorker = new Map<number, Live>();
    for (let i = 0; i < 12 && byWorker.size < 2; i++) {
      const live = connect(`ws://127.0.0.1:${this.port}/ws`);
      const { worker } = (await live.request('who')) as { worker: number };
      if (byWorker.has(worker)) live.close();
      else byWorker.set(worker, live);
    }
    assert.equal(byWorker.size, 2, 'a client on each worker');
    return byWorker;
  }
  async stop(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    const gone = new Promise((r) => this.proc.once('exit', r));
    this.proc.kill('SIGTERM');
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 8000);
    await gone;
    clearTimeout(timer);
  }
}
