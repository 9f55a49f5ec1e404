// Starts test/cluster/server.ts as its own process (a real primary with real worker threads)
// and talks to it over real sockets.
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { connect, type Live } from '../../../client/src/index.ts';

export interface Cluster {
  port: number;
  workers: number;
  mode: string;
  proc: ChildProcess;
  /** Every line the process printed (stdout and stderr), JSON-parsed where possible. */
  lines: any[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM (or `signal`) and wait for the exit; bounded: SIGKILL after 15 s. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const serverFile = new URL('./server.ts', import.meta.url).pathname;

/** Runs the cluster test server with `env`; resolves once it is listening (or rejects with its output). */
export function startCluster(env: Record<string, string> = {}, timeout = 20_000): Promise<Cluster> {
  const proc = spawn(process.execPath, [serverFile], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: any[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`cluster did not start in time:\n${lines.map((l) => JSON.stringify(l)).join('\n')}`));
    }, timeout);
    const onLine = (text: string) => {
      let line: any = text;
      try {
        line = JSON.parse(text);
      } catch {}
      lines.push(line);
      if (line?.ready !== undefined) {
        clearTimeout(timer);
        const cluster: Cluster = {
          port: line.ready,
          workers: line.workers,
          mode: line.mode,
          proc,
          lines,
          exited,
          async stop(signal = 'SIGTERM') {
            if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
            const kill = setTimeout(() => proc.kill('SIGKILL'), 15_000);
            const result = await exited;
            clearTimeout(kill);
            return result;
          },
        };
        resolve(cluster);
      }
    };
    for (const stream of [proc.stdout!, proc.stderr!]) {
      let buffered = '';
      stream.setEncoding('utf8').on('data', (chunk: string) => {
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) !== -1) {
          onLine(buffered.slice(0, nl));
          buffered = buffered.slice(nl + 1);
        }
      });
    }
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(
        new Error(
          `cluster exited (${code ?? signal}) before listening:\n${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}`,
        ),
      );
    });
  });
}

/** One GET on a fresh connection (so the acceptor or the kernel picks a worker for it), or on `agent`'s kept-alive one. */
export function get(port: number, path: string, agent: http.Agent | false = false): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ port, host: '127.0.0.1', path, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res
        .on('data', (d) => (body += d))
        .on('end', () => {
          let parsed: unknown = body;
          try {
            parsed = JSON.parse(body);
          } catch {}
          resolve({ status: res.statusCode!, body: parsed });
        });
    });
    req.setTimeout(10_000, () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
  });
}

/** Fresh-connection GETs until every worker 1..n answered `path`; returns one answer per worker. */
export async function fromEachWorker(port: number, path: string, workers: number, tries = 60): Promise<Map<number, any>> {
  const seen = new Map<number, any>();
  for (let i = 0; i < tries && seen.size < workers; i++) {
    const { body } = await get(port, path);
    if (!seen.has(body.worker)) seen.set(body.worker, body);
  }
  if (seen.size < workers) throw new Error(`only workers ${[...seen.keys()]} answered ${path}`);
  return seen;
}

/**
 * A kept-alive connection known to be on `worker`: an agent with one socket, tried until its
 * `/who` says so. With reusePort the kernel deals connections by a hash of the addresses, so a
 * handful of fresh connections can all land on one worker; a pinned one cannot.
 */
export async function connectionOn(port: number, worker: number, tries = 40): Promise<http.Agent> {
  for (let i = 0; i < tries; i++) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    if ((await get(port, '/who', agent)).body.worker === worker) return agent;
    agent.destroy();
  }
  throw new Error(`no connection reached worker ${worker}`);
}

/** Realtime clients, one landing on each worker (connections are dealt round-robin). */
export async function clientOnEachWorker(port: number, workers: number): Promise<{ byWorker: Map<number, Live>; spare: Live[] }> {
  const byWorker = new Map<number, Live>();
  const spare: Live[] = [];
  for (let i = 0; i < workers * 6 && byWorker.size < workers; i++) {
    const client = connect(`ws://127.0.0.1:${port}/live`, { maxRetries: 0 });
    const worker = (await client.request('who')) as number;
    if (byWorker.has(worker)) spare.push(client);
    else byWorker.set(worker, client);
  }
  if (byWorker.size < workers) throw new Error(`clients reached only workers ${[...byWorker.keys()]}`);
  return { byWorker, spare };
}

export async function waitFor(check: () => Promise<boolean> | boolean, timeout = 5000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeout;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
