// A Tachyon app with a history topic and real @tachyon/client clients, for the history
// suite: real sockets, the store under test, nothing mocked.
import { App, type HistoryStore } from '../../packages/server/src/index.ts';
import { connect, type Live, type SubscribeInfo } from '../../packages/client/src/index.ts';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function waitFor(check: () => boolean, what: string, timeout = 5000): Promise<void> {
  const end = Date.now() + timeout;
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${timeout} ms`);
    await sleep(5);
  }
}

export interface LogEntry {
  level: string;
  obj: any;
  msg?: string;
}

export interface Server {
  app: App;
  port: number;
  url: string;
  log: LogEntry[];
  /** Cuts every connection without a close frame (the clients see 1006 and reconnect). */
  dropAll(): void;
  close(): Promise<void>;
}

/** `room:*` keeps history (size, ttl) in `store` (undefined: memory); `secret:*` is refused by the route's subscribe hook. */
export async function startServer(options: { size?: number; ttl?: number; store?: HistoryStore; port?: number } = {}): Promise<Server> {
  const log: LogEntry[] = [];
  const make = (level: string) => (obj: any, msg?: string) => void log.push({ level, obj, msg });
  const app = new App({ logger: { error: make('error'), warn: make('warn'), info: make('info'), debug: make('debug') } as never });
  app.topic('room:*', { history: { size: options.size ?? 100, ttl: options.ttl, store: options.store } });
  const sockets = new Set<{ terminate(): void }>();
  app.ws('/live', {
    open: (ws) => void sockets.add(ws),
    close: (ws) => void sockets.delete(ws),
    subscribe: (_ws, topic) => !topic.startsWith('secret:'),
    events: {
      say: { handler: (ws, data) => void ws.publish('room:say', 'n', data) },
    },
  });
  const server = await app.listen(options.port ?? 0, '127.0.0.1');
  const port = server.port;
  return {
    app,
    port,
    url: `ws://127.0.0.1:${port}/live`,
    log,
    dropAll: () => {
      for (const s of [...sockets]) s.terminate();
    },
    close: () => app.close({ timeout: 500 }),
  };
}

export interface Subscriber {
  live: Live<{ n: number }, { say: { data: number } }>;
  /** Every `n` received on the topic, in order. */
  got: number[];
  /** Every onSubscribed call. */
  infos: SubscribeInfo[];
  close(): void;
}

export async function subscriber(url: string, topic: string, options: { last?: number } = {}): Promise<Subscriber> {
  const live = connect<{ n: number }, { say: { data: number } }>(url, { minDelay: 5, maxDelay: 20, onError: () => {} });
  const got: number[] = [];
  const infos: SubscribeInfo[] = [];
  live.subscribe(topic, (_e, data) => void got.push(data as number), { last: options.last, onSubscribed: (i) => void infos.push(i) });
  await live.ready;
  await waitFor(() => infos.length === 1, 'subscribed');
  return { live, got, infos, close: () => live.close() };
}

export const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

export interface RawClient {
  frames: string[];
  send(frame: unknown): void;
  /** The next frame (from `from` on) that `match` accepts. */
  next(match: (m: any) => boolean, what?: string): Promise<any>;
  close(): void;
}

/** A bare WebSocket speaking the protocol by hand: what a hostile or foreign client sends. */
export async function rawClient(url: string): Promise<RawClient> {
  const ws = new WebSocket(url);
  const frames: string[] = [];
  ws.onmessage = (e) => void frames.push(String(e.data));
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  let seen = 0;
  return {
    frames,
    send: (frame) => ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame)),
    async next(match, what = 'frame') {
      let found: any;
      await waitFor(() => {
        for (; seen < frames.length; seen++) {
          const m = JSON.parse(frames[seen]!);
          if (match(m)) {
            seen++;
            found = m;
            return true;
          }
        }
        return false;
      }, what);
      return found;
    },
    close: () => ws.close(),
  };
}
