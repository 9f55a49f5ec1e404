// The parent's handle on a Tachyon server process (child.ts): start it, command it, read
// its log, connect real WebSocket clients (@tachyon/client) to it.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { connect, type Live } from '@tachyon/client';

const CHILD = fileURLToPath(new URL('./child.ts', import.meta.url));

export interface BusStats {
  connected: boolean;
  published: number;
  received: number;
  delivered: number;
  queued: number;
  inFlight: number;
  dropped: number;
  failed: number;
  rejected: number;
  topics: number;
  servers: number;
}

export interface BusConfig {
  kind: 'redis' | 'nats';
  options: Record<string, unknown>;
}

export class TachyonNode {
  readonly port: number;
  readonly log: { level: string; msg?: string; [k: string]: unknown }[] = [];
  private readonly proc: ChildProcess;
  private nextId = 1;
  private readonly waiting = new Map<number, (v: unknown) => void>();
  private readonly clients: Live[] = [];

  private constructor(proc: ChildProcess, port: number) {
    this.proc = proc;
    this.port = port;
    proc.on('message', (m: { id?: number; result?: unknown }) => {
      if (m.id !== undefined) {
        this.waiting.get(m.id)?.(m.result);
        this.waiting.delete(m.id);
      }
    });
  }

  static start(config: BusConfig): Promise<TachyonNode> {
    const proc = fork(CHILD, [JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    const log: TachyonNode['log'] = [];
    let buffered = '';
    const read = (d: Buffer) => {
      buffered += d.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        try {
          log.push(JSON.parse(line));
        } catch {
          log.push({ level: 'raw', msg: line });
        }
      }
    };
    proc.stdout!.on('data', read);
    proc.stderr!.on('data', read);
    return new Promise((resolve, reject) => {
      proc.once('exit', (code) => reject(new Error(`server exited with ${code}: ${log.map((l) => JSON.stringify(l)).join('\n')}`)));
      proc.once('message', (m: { listening?: number }) => {
        const node = new TachyonNode(proc, m.listening!);
        node.log.push(...log);
        log.push = (...items) => node.log.push(...items);
        resolve(node);
      });
    });
  }

  private call<T>(command: Record<string, unknown>): Promise<T> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve as (v: unknown) => void);
      this.proc.send({ ...command, id });
    });
  }

  publish(topic: string, count: number, from: string, start = 0): Promise<void> {
    return this.call({ op: 'publish', topic, count, from, start });
  }
  publishRaw(topic: string, bytes: Buffer): Promise<void> {
    return this.call({ op: 'publishRaw', topic, base64: bytes.toString('base64') });
  }
  stats(): Promise<BusStats> {
    return this.call({ op: 'stats' });
  }
  subscribers(topic: string): Promise<{ total: number; local: number }> {
    return this.call({ op: 'subscribers', topic });
  }
  /** app.requestAll() on this server: replies, missing ids with their codes, how long it took, and bus.server. */
  requestAll(topic: string, event: string, data: unknown, timeout: number): Promise<RequestAllOutcome> {
    return this.call({ op: 'requestAll', topic, event, data, timeout });
  }
  /** The server process dies at once (SIGKILL): no goodbye on the bus. */
  kill(): void {
    this.proc.kill('SIGKILL');
  }
  get alive(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** A client subscribed to `topics`, recording what it receives; resolves once the server confirmed. */
  async subscriber(topics: string[]): Promise<Recorder> {
    const live = connect(`ws://127.0.0.1:${this.port}/ws`);
    this.clients.push(live);
    const rec = new Recorder(live);
    for (const t of topics) live.subscribe(t, (event, data) => rec.got.push({ topic: t, event, data: data as Seq }));
    live.onMessage((data) => {
      if (typeof data !== 'string') rec.binary.push(Buffer.from(data));
    });
    await live.ready;
    for (const t of topics) await waitFor(async () => (await this.subscribers(t)).local > 0, `local subscriber on ${t}`);
    return rec;
  }

  logged(pattern: RegExp): boolean {
    return this.log.some((l) => pattern.test(String(l.msg ?? '')));
  }

  async close(): Promise<void> {
    for (const c of this.clients) c.close();
    if (!this.alive) return;
    const exited = new Promise((r) => this.proc.once('exit', r));
    void this.call({ op: 'close' });
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

export interface RequestAllOutcome {
  replies: { id: string; data: unknown }[];
  missing: { id: string; code: string }[];
  ms: number;
  server: string;
}

export interface Seq {
  from: string;
  seq: number;
}

export class Recorder {
  readonly got: { topic: string; event: string; data: Seq }[] = [];
  readonly binary: Buffer[] = [];
  readonly live: Live;
  constructor(live: Live) {
    this.live = live;
  }
  /** Sequence numbers received from `from` on `topic`, in arrival order. */
  seqs(from: string, topic?: string): number[] {
    return this.got.filter((g) => g.data?.from === from && (topic === undefined || g.topic === topic)).map((g) => g.data.seq);
  }
  close(): void {
    this.live.close();
  }
}

export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeout = 10_000): Promise<void> {
  const end = Date.now() + timeout;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const range = (n: number, start = 0) => Array.from({ length: n }, (_, i) => start + i);
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
