// Test helpers: real servers on port 0, real clients (fetch, raw TCP sockets).
import { connect } from 'node:net';
import type { App, Server } from '../src/index.ts';

export interface Running {
  server: Server;
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function start(app: App): Promise<Running> {
  const server = await app.listen({ port: 0, host: '127.0.0.1' });
  return { server, port: server.port, url: `http://127.0.0.1:${server.port}`, close: () => server.close({ timeout: 2000 }) };
}

/** Sends bytes exactly as given and resolves with the raw response text once the server closes or `until` matches. */
export function rawRequest(port: number, payload: string | Buffer, options: { until?: RegExp; timeout?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(data);
    }, options.timeout ?? 2000);
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
      if (options.until?.test(data)) {
        clearTimeout(timer);
        socket.destroy();
        resolve(data);
      }
    });
    socket.on('end', () => {
      clearTimeout(timer);
      resolve(data);
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      if (data) resolve(data);
      else reject(err);
    });
    socket.write(payload);
  });
}

/** Status code of a raw HTTP response text. */
export function statusOf(raw: string): number {
  const m = /^HTTP\/1\.1 (\d{3})/.exec(raw);
  return m ? Number(m[1]) : 0;
}

/** A logger that records entries, for asserting on log lines. */
export function recordingLogger() {
  const entries: { level: string; obj: unknown; msg?: string }[] = [];
  const make = (level: string) => (obj: object | string, msg?: string) => entries.push({ level, obj, msg });
  return { entries, logger: { error: make('error'), warn: make('warn'), info: make('info'), debug: make('debug') } };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls until `check` is true or the deadline passes. */
export async function eventually(check: () => boolean, timeout = 2000): Promise<void> {
  const end = Date.now() + timeout;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(10);
  }
}
