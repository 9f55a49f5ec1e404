// Test helpers: an app with the dashboard on a real port, and a WebSocket client that records
// what the server sends (Node's global WebSocket).
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { App, type Logger } from '@tachyon/server';
import { dashboard, type DashboardOptions } from '../src/index.ts';

export interface Started {
  app: App;
  base: string;
  ws: string;
  close(): Promise<void>;
}

/** A small app: two HTTP routes and a WebSocket route with presence and history topics, plus the dashboard. */
export async function startApp(options: DashboardOptions = {}, host = '127.0.0.1', logger?: Logger): Promise<Started> {
  const app = new App(logger === undefined ? {} : { logger });
  app.topic('room:*', { presence: true, history: { size: 5 } });
  app.get('/hello', () => 'hi');
  app.get('/users/:id', (req) => ({ id: req.params.id }));
  app.get('/boom', () => {
    throw new Error('boom');
  });
  app.ws('/live', {
    upgrade: (req) => ({ id: req.query.user ?? 'anon' }),
    events: { ping: { handler: () => 'pong' } },
  });
  await app.register(dashboard({ interval: 250, ...options }));
  const server = await app.listen(0, host);
  const local = host === '0.0.0.0' ? '127.0.0.1' : host;
  return {
    app,
    base: `http://${local}:${server.port}`,
    ws: `ws://${local}:${server.port}`,
    close: () => server.close({ timeout: 2000 }),
  };
}

export interface Client {
  ws: WebSocket;
  messages: any[];
  next(match: (m: any) => boolean, timeout?: number): Promise<any>;
  closed: Promise<{ code: number; reason: string }>;
}

/** Opens a WebSocket; rejects when the upgrade is refused. */
export async function client(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const ws = new WebSocket(url, { headers } as never);
  const messages: any[] = [];
  const waiters: { match: (m: any) => boolean; resolve: (m: any) => void }[] = [];
  ws.onmessage = (e) => {
    const m = typeof e.data === 'string' ? JSON.parse(e.data) : e.data;
    messages.push(m);
    for (const w of [...waiters]) if (w.match(m)) waiters.splice(waiters.indexOf(w), 1), w.resolve(m);
  };
  const closed = new Promise<{ code: number; reason: string }>((r) =>
    ws.addEventListener('close', (e) => r({ code: e.code, reason: e.reason })),
  );
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error('websocket refused'));
  });
  return {
    ws,
    messages,
    closed,
    next(match, timeout = 5000) {
      const seen = messages.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no matching message in time')), timeout);
        waiters.push({ match, resolve: (m) => (clearTimeout(timer), resolve(m)) });
      });
    },
  };
}

/** The status line's code of a WebSocket upgrade, sent as raw bytes (101 when accepted). */
export function upgradeStatus(port: number, path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const extra = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
        `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${extra}\r\n`,
    );
    socket.once('data', (chunk) => {
      socket.destroy();
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 0));
    });
    socket.once('error', reject);
  });
}

export const stats = (m: any) => m?.event === 'stats';

/** A port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** cluster-server.ts (2 workers, the dashboard with actions) as its own process; its port once it is ready. */
export async function startClusterProcess(): Promise<{ proc: ChildProcess; port: number }> {
  const proc = spawn(process.execPath, [new URL('./cluster-server.ts', import.meta.url).pathname], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`cluster did not start: ${out}`)), 30_000);
    proc.stdout!.on('data', (chunk) => {
      out += chunk;
      const m = /"ready":(\d+)/.exec(out);
      if (m) clearTimeout(timer), resolve(Number(m[1]));
    });
  });
  return { proc, port };
}
