// Two Tachyon servers on a broker bus with a history + presence topic, real @tachyon/client
// clients and a publishing loop: what the fault tests (faults.test.ts, failover.test.ts) drive
// while they kill, freeze or fail over the broker.
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { connect, type Live, type SubscribeInfo } from '../../packages/client/src/index.ts';
import { App, type Bus, type HistoryStore, health } from '../../packages/server/src/index.ts';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/** Heap after a full collection: what is held, not garbage. */
export const heldHeap = () => (gc(), process.memoryUsage().heapUsed);
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeout = 10_000): Promise<void> {
  const end = Date.now() + timeout;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${timeout} ms`);
    await sleep(20);
  }
}

export const LIMITS = { maxQueue: 200, presenceInterval: 200, stallTimeout: 2000 };

export interface Node {
  app: App;
  port: number;
  bus: Bus & { stats(): { connected: boolean; stalled: boolean; queued: number; inFlight: number; dropped: number } };
  logs: string[];
  dropAll(): void;
  close(): Promise<void>;
}

export async function startNode(bus: Node['bus'], store: HistoryStore): Promise<Node> {
  const logs: string[] = [];
  const log = (level: string) => (obj: unknown, msg?: string) => void logs.push(`${level} ${msg ?? ''} ${JSON.stringify(obj)}`);
  const app = new App({
    bus,
    presence: { heartbeat: 200 },
    logger: { error: log('error'), warn: log('warn'), info: log('info'), debug: () => {} },
  });
  app.use(health());
  app.topic('room:*', { history: { size: 10_000, store }, presence: { events: true } });
  const sockets = new Set<{ terminate(): void }>();
  app.ws('/ws', {
    upgrade: (req) => ({ id: String(req.query.user ?? 'anon') }),
    open: (ws) => void sockets.add(ws),
    close: (ws) => void sockets.delete(ws),
  });
  const server = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    app,
    port: server.port,
    bus,
    logs,
    dropAll: () => {
      for (const s of [...sockets]) s.terminate();
    },
    close: () => server.close({ timeout: 1000 }),
  };
}

const clients = new Set<Live>();
let stopAll = () => {}; // the traffic loop of a test that failed midway
/** For afterEach: stops the traffic loop and closes the clients a failed test left. */
export function cleanUp(): void {
  stopAll();
  for (const l of clients) l.close();
  clients.clear();
}

/** A client on `node` as `user`, subscribed to `topic` (history and presence). */
export async function subscriber(node: Node, user: string, topic: string) {
  const live: Live = connect(`ws://127.0.0.1:${node.port}/ws?user=${user}`, { minDelay: 20, maxDelay: 100, onError: () => {} });
  clients.add(live);
  const got: number[] = [];
  const infos: SubscribeInfo[] = [];
  live.subscribe(topic, (event, data) => event === 'n' && void got.push(data as number), { onSubscribed: (i) => void infos.push(i) });
  await live.ready;
  await waitFor(() => infos.length === 1, 'subscribed');
  return { live, got, infos };
}

export const readyz = async (n: Node) => (await fetch(`http://127.0.0.1:${n.port}/readyz`)).status;
export const members = async (n: Node, topic: string) =>
  (await n.app.presence(topic))
    .map((m) => m.id)
    .sort()
    .join();
/** Asserts that `xs` only grows (no reorder, no duplicate); a failure shows where it broke. */
export function assertIncreasing(xs: number[], what: string): void {
  const i = xs.findIndex((x, j) => j > 0 && x <= xs[j - 1]!);
  if (i > 0)
    assert.fail(`${what}: ${xs[i - 1]} then ${xs[i]} at ${i} of ${xs.length}, around: ${xs.slice(Math.max(0, i - 8), i + 8).join(' ')}`);
}

/** Publishes 0, 1, 2… on `topic` every 5 ms until stopped (afterEach stops it too). */
export function publishing(app: App, topic: string) {
  let n = 0;
  let stop = false;
  const loop = (async () => {
    while (!stop) {
      app.publish(topic, 'n', n++);
      await sleep(5);
    }
  })();
  stopAll = () => void (stop = true);
  return {
    get n() {
      return n;
    },
    async stop() {
      stop = true;
      await loop;
    },
  };
}
