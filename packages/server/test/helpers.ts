// Test helpers: real servers on port 0, real clients (fetch, raw TCP sockets).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/** A raw WebSocket client over TCP: sends any frame (malformed ones too), parses what comes back. */
export interface RawWs {
  /** Status line + headers of the handshake answer. */
  handshake: string;
  frames: { opcode: number; payload: Buffer }[];
  /** Close code from the server's close frame, or null. */
  closeCode(): number | null;
  /** Resolves when the TCP connection has ended. */
  ended: Promise<void>;
  send(opcode: number, payload: Buffer | string, fin?: boolean): void;
  pause(): void;
  resume(): void;
  destroy(): void;
}

export function rawWebSocket(port: number, path: string, headers: Record<string, string> = {}): Promise<RawWs> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    let handshake: string | null = null;
    const frames: { opcode: number; payload: Buffer }[] = [];
    let endResolve!: () => void;
    const ended = new Promise<void>((r) => (endResolve = r));
    socket.on('close', () => endResolve());
    socket.on('error', () => endResolve());
    const extra = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`,
    );
    const api: RawWs = {
      get handshake() {
        return handshake ?? '';
      },
      frames,
      closeCode: () => {
        const f = frames.find((x) => x.opcode === 8);
        return f && f.payload.length >= 2 ? f.payload.readUInt16BE(0) : null;
      },
      ended,
      send(opcode, payload, fin = true) {
        const data = Buffer.from(payload);
        const mask = Buffer.from([1, 2, 3, 4]);
        const len = data.length;
        const head = len < 126 ? Buffer.from([(fin ? 0x80 : 0) | opcode, 0x80 | len]) : len < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
        if (len >= 126) {
          head[0] = (fin ? 0x80 : 0) | opcode;
          if (len < 65536) {
            head[1] = 0x80 | 126;
            head.writeUInt16BE(len, 2);
          } else {
            head[1] = 0x80 | 127;
            head.writeBigUInt64BE(BigInt(len), 2);
          }
        }
        for (let i = 0; i < len; i++) data[i]! ^= mask[i % 4]!;
        socket.write(Buffer.concat([head, mask, data]));
      },
      pause: () => socket.pause(),
      resume: () => socket.resume(),
      destroy: () => socket.destroy(),
    };
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      if (handshake === null) {
        const end = buf.indexOf('\r\n\r\n');
        if (end === -1) return;
        handshake = buf.subarray(0, end).toString('latin1');
        buf = buf.subarray(end + 4);
        if (!handshake.startsWith('HTTP/1.1 101')) {
          handshake += '\r\n\r\n' + buf.toString('latin1');
          resolve(api);
          return;
        }
        resolve(api);
      }
      for (;;) {
        if (buf.length < 2) return;
        let len = buf[1]! & 0x7f;
        let off = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          off = 4;
        } else if (len === 127) {
          if (buf.length < 10) return;
          len = Number(buf.readBigUInt64BE(2));
          off = 10;
        }
        if (buf.length < off + len) return;
        frames.push({ opcode: buf[0]! & 0x0f, payload: Buffer.from(buf.subarray(off, off + len)) });
        buf = buf.subarray(off + len);
      }
    });
    socket.on('error', (err) => handshake === null && reject(err));
  });
}

/** A WebSocket (Node's global client) that records text messages as parsed JSON where possible. */
export async function openWs(
  url: string,
  init?: { headers?: Record<string, string> },
): Promise<{
  ws: WebSocket;
  messages: unknown[];
  next(match?: (m: any) => boolean, timeout?: number): Promise<any>;
  closed: Promise<{ code: number; reason: string }>;
}> {
  const ws = new WebSocket(url, init as never);
  ws.binaryType = 'arraybuffer';
  const messages: unknown[] = [];
  const waiters: { match: (m: any) => boolean; resolve: (m: any) => void }[] = [];
  ws.onmessage = (e) => {
    let m: unknown = e.data;
    if (typeof e.data === 'string') {
      try {
        m = JSON.parse(e.data);
      } catch {
        m = e.data;
      }
    }
    messages.push(m);
    const i = waiters.findIndex((w) => w.match(m));
    if (i !== -1) waiters.splice(i, 1)[0]!.resolve(m);
  };
  const closed = new Promise<{ code: number; reason: string }>((r) => (ws.onclose = (e) => r({ code: e.code, reason: e.reason })));
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error('websocket failed to open'));
  });
  return {
    ws,
    messages,
    closed,
    next(match = () => true, timeout = 2000) {
      const seen = messages.find(match);
      if (seen !== undefined) {
        messages.splice(messages.indexOf(seen), 1);
        return Promise.resolve(seen);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no matching message in time')), timeout);
        waiters.push({
          match,
          resolve: (m) => {
            clearTimeout(timer);
            messages.splice(messages.indexOf(m), 1);
            resolve(m);
          },
        });
      });
    },
  };
}

/**
 * A self-signed certificate for `name` and 127.0.0.1 (P-256, one day), made with openssl in a
 * temporary folder that is removed when the process exits. PEM text and the files' paths.
 */
export function selfSignedCert(name = 'localhost'): { key: string; cert: string; keyFile: string; certFile: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tachyon-cert-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  args.push('-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', `/CN=${name}`);
  args.push('-addext', `subjectAltName=DNS:${name},IP:127.0.0.1`);
  execFileSync('openssl', args, { stdio: 'ignore' });
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), keyFile, certFile };
}

/** A WebSocket (openWs) subscribed to `topics`, one `subscribe` frame each, their answers consumed. */
export async function subscribedWs(url: string, ...topics: string[]): ReturnType<typeof openWs> {
  const c = await openWs(url);
  for (const [i, topic] of topics.entries()) {
    c.ws.send(JSON.stringify({ type: 'subscribe', topic, ref: i + 1 }));
    await c.next((m) => m.type === 'subscribed' && m.topic === topic);
  }
  return c;
}
