// Real brokers for the bus tests: redis-server (plain or a one-node Redis Cluster for sharded
// pub/sub) and nats-server, each on a free port in its own temp dir, that the tests can stop,
// restart on the same port, pause (SIGSTOP: a broker that accepts bytes and answers nothing)
// and resume. scripts/ensure-system-deps.mjs installs the binaries when missing.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function waitForPort(port: number, timeout = 10_000): Promise<void> {
  const end = Date.now() + timeout;
  while (Date.now() < end) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await sleep(25);
  }
  throw new Error(`nothing listens on ${port} after ${timeout} ms`);
}

export abstract class Broker {
  readonly port: number;
  readonly dir: string;
  protected proc: ChildProcess | null = null;
  protected constructor(port: number) {
    this.port = port;
    this.dir = mkdtempSync(join(tmpdir(), 'tachyon-broker-'));
  }
  protected abstract command(): [string, string[]];
  /** The URL a bus connects to. */
  abstract get url(): string;

  async start(): Promise<this> {
    const [cmd, args] = this.command();
    const proc = spawn(cmd, args, { cwd: this.dir, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    proc.stderr!.on('data', (d) => (err += d));
    proc.once('exit', (code) => {
      if (this.proc === proc && code !== 0 && code !== null) console.error(`${cmd} exited with ${code}: ${err}`);
    });
    this.proc = proc;
    await waitForPort(this.port);
    await this.ready();
    return this;
  }
  protected async ready(): Promise<void> {}

  async stop(): Promise<void> {
    const proc = this.proc;
    if (proc === null) return;
    this.proc = null;
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGCONT');
    proc.kill('SIGKILL');
    await gone;
  }
  async restart(downMs = 300): Promise<void> {
    await this.stop();
    await sleep(downMs);
    await this.start();
  }
  pause(): void {
    this.proc?.kill('SIGSTOP');
  }
  resume(): void {
    this.proc?.kill('SIGCONT');
  }
  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export class RedisBroker extends Broker {
  readonly cluster: boolean;
  readonly password: string | undefined;
  private constructor(port: number, cluster: boolean, password?: string) {
    super(port);
    this.cluster = cluster;
    this.password = password;
  }
  static async start(options: { cluster?: boolean; port?: number; password?: string } = {}): Promise<RedisBroker> {
    return new RedisBroker(options.port ?? (await freePort()), options.cluster ?? false, options.password).start();
  }
  /** A broker that is not started: its port is free and stays so until start(). */
  static async unstarted(options: { cluster?: boolean } = {}): Promise<RedisBroker> {
    return new RedisBroker(await freePort(), options.cluster ?? false);
  }
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }
  protected command(): [string, string[]] {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir];
    if (this.cluster) args.push('--cluster-enabled', 'yes', '--cluster-config-file', join(this.dir, 'nodes.conf'));
    if (this.password !== undefined) args.push('--requirepass', this.password);
    return ['redis-server', args];
  }
  cli(...args: string[]): string {
    const auth = this.password === undefined ? [] : ['--no-auth-warning', '-a', this.password];
    return execFileSync('redis-cli', ['-p', String(this.port), ...auth, ...args], { encoding: 'utf8' }).trim();
  }
  protected override async ready(): Promise<void> {
    if (!this.cluster) return;
    // One node owning every slot: a real Redis Cluster (sharded pub/sub routes by slot).
    // nodes.conf in this.dir keeps the slots across restarts.
    if (!this.cli('cluster', 'info').includes('cluster_state:ok')) this.cli('cluster', 'addslotsrange', '0', '16383');
    const end = Date.now() + 10_000;
    while (!this.cli('cluster', 'info').includes('cluster_state:ok')) {
      if (Date.now() > end) throw new Error('redis cluster not ok');
      await sleep(50);
    }
  }
}

export class NatsBroker extends Broker {
  private readonly auth: { user: string; pass: string } | undefined;
  private constructor(port: number, auth?: { user: string; pass: string }) {
    super(port);
    this.auth = auth;
  }
  static async start(options: { auth?: { user: string; pass: string } } = {}): Promise<NatsBroker> {
    return new NatsBroker(await freePort(), options.auth).start();
  }
  static async unstarted(): Promise<NatsBroker> {
    return new NatsBroker(await freePort());
  }
  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }
  protected command(): [string, string[]] {
    const args = ['-a', '127.0.0.1', '-p', String(this.port)];
    if (this.auth) args.push('--user', this.auth.user, '--pass', this.auth.pass);
    return ['nats-server', args];
  }
}
