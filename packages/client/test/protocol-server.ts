// A small, independent implementation of the server side of docs/protocol.md on raw
// uWebSockets.js. The client tests run against it (and against the framework's own
// `app.ws`), so the client is checked against two implementations of the protocol.
import type * as UwsTypes from 'uWebSockets.js';
// Loaded through the server's loader, which makes the addon loadable on glibc < 2.38 (a plain
// import fails there); the implementation below is still raw uWS, independent of the framework.
import { loadAddon } from '../../server/src/uws/load.ts';

const uWS = loadAddon<typeof UwsTypes>();

export interface UserData {
  query: URLSearchParams;
  closed: boolean;
}

/** The parts of uWS's WebSocket used here and by the tests. */
export interface Conn {
  send(message: string | ArrayBuffer | Uint8Array, isBinary?: boolean): number;
  end(code?: number, reason?: string): void;
  close(): void;
  subscribe(topic: string): boolean;
  unsubscribe(topic: string): boolean;
  getUserData(): UserData;
}

/** Thrown by an event handler to answer with a specific error code. */
export class ProtocolError extends Error {
  code: string;
  issues: { path: (string | number)[]; message: string }[] | undefined;
  constructor(code: string, message: string, issues?: { path: (string | number)[]; message: string }[]) {
    super(message);
    this.code = code;
    this.issues = issues;
  }
}

export interface ProtocolServerOptions {
  /** Port to listen on (0: any free port). */
  port?: number;
  /** Return false to refuse the upgrade with 401. */
  upgrade?(query: URLSearchParams): boolean;
  open?(ws: Conn): void;
  close?(ws: Conn, code: number, reason: string): void;
  /** Decides subscriptions to non-reserved topics: true allows; false or a reason string denies. */
  subscribe?(ws: Conn, topic: string): boolean | string;
  /** Event handlers: the return value (or promise) is the reply's data. Throw ProtocolError for a coded error. */
  events?: Record<string, (ws: Conn, data: unknown) => unknown>;
  /** Non-protocol frames: binary, or text not starting with {"type":" */
  message?(ws: Conn, data: ArrayBuffer, isBinary: boolean): void;
}

export interface ProtocolServer {
  port: number;
  /** ws://127.0.0.1:port/live */
  url: string;
  /** Every protocol text frame received, in order, across all sockets. */
  frames: string[];
  /** Upgrade requests received (accepted or not). */
  upgrades: number;
  sockets: Set<Conn>;
  publish(topic: string, event: string, data?: unknown): void;
  send(ws: Conn, event: string, data?: unknown): void;
  /** Stops accepting connections; open sockets stay open. */
  unlisten(): void;
  /** Stops listening, ends every socket with `code` (default 1001), then closes the app. */
  close(code?: number, reason?: string): Promise<void>;
}

const TOPIC = /^[\x21\x23-\x5b\x5d-\x7e]{1,256}$/; // printable ASCII, no quote or backslash

function envelope(topic: string | undefined, event: string, data: unknown): string {
  return `{${topic === undefined ? '' : `"topic":${JSON.stringify(topic)},`}"event":${JSON.stringify(event)}${data === undefined ? '' : `,"data":${JSON.stringify(data)}`}}`;
}

export function startProtocolServer(options: ProtocolServerOptions = {}): Promise<ProtocolServer> {
  const app = uWS.App();
  const frames: string[] = [];
  const sockets = new Set<Conn>();
  const decoder = new TextDecoder();
  let upgrades = 0;

  const answer = (ws: Conn, frame: object) => {
    if (!ws.getUserData().closed) ws.send(JSON.stringify(frame));
  };

  const subscribeOne = (ws: Conn, topic: unknown, ref: unknown) => {
    let reason: string | undefined;
    if (typeof topic !== 'string' || !TOPIC.test(topic)) reason = 'invalid topic';
    else if (topic.startsWith('__')) reason = 'reserved topic';
    else {
      const verdict = options.subscribe ? options.subscribe(ws, topic) : true;
      if (verdict !== true) reason = typeof verdict === 'string' ? verdict : 'forbidden';
    }
    if (reason === undefined) {
      ws.subscribe(topic as string);
      answer(ws, { type: 'subscribed', topic, ref });
    } else {
      answer(ws, { type: 'denied', topic, ref, reason });
    }
  };

  const onEvent = async (ws: Conn, f: { event?: unknown; data?: unknown; ref?: number }) => {
    const handler = typeof f.event === 'string' ? options.events?.[f.event] : undefined;
    const hasRef = f.ref !== undefined;
    if (!handler) {
      if (hasRef) answer(ws, { type: 'error', ref: f.ref, code: 'UNKNOWN_EVENT', message: `Unknown event ${String(f.event)}` });
      return;
    }
    try {
      const data = await handler(ws, f.data);
      if (hasRef) answer(ws, { type: 'reply', ref: f.ref, data });
    } catch (err) {
      if (!hasRef) return;
      if (err instanceof ProtocolError) answer(ws, { type: 'error', ref: f.ref, code: err.code, message: err.message, issues: err.issues });
      else answer(ws, { type: 'error', ref: f.ref, code: 'HANDLER_ERROR', message: 'Internal error' });
    }
  };

  app.ws<UserData>('/*', {
    maxPayloadLength: 1 << 20,
    idleTimeout: 60,
    upgrade(res, req, context) {
      upgrades++;
      const query = new URLSearchParams(req.getQuery() ?? '');
      const key = req.getHeader('sec-websocket-key');
      const protocol = req.getHeader('sec-websocket-protocol').split(',')[0]!.trim();
      const extensions = req.getHeader('sec-websocket-extensions');
      if (options.upgrade && !options.upgrade(query)) {
        res.writeStatus('401 Unauthorized').end('unauthorized');
        return;
      }
      res.upgrade<UserData>({ query, closed: false }, key, protocol, extensions, context);
    },
    open(ws) {
      sockets.add(ws as unknown as Conn);
      options.open?.(ws as unknown as Conn);
    },
    close(ws, code, reason) {
      const conn = ws as unknown as Conn;
      conn.getUserData().closed = true;
      sockets.delete(conn);
      options.close?.(conn, code, decoder.decode(reason));
    },
    message(ws, message, isBinary) {
      const conn = ws as unknown as Conn;
      const text = isBinary ? '' : decoder.decode(message);
      if (isBinary || !text.startsWith('{"type":"')) {
        options.message?.(conn, message.slice(0), isBinary);
        return;
      }
      frames.push(text);
      let f: { type?: unknown; ref?: number; topic?: unknown; topics?: unknown; event?: unknown; data?: unknown };
      try {
        f = JSON.parse(text);
      } catch {
        answer(conn, { type: 'error', code: 'BAD_FRAME', message: 'Malformed JSON' });
        return;
      }
      const ref = f.ref;
      switch (f.type) {
        case 'subscribe':
          if (Array.isArray(f.topics)) for (const t of f.topics) subscribeOne(conn, t, ref);
          else if (f.topic !== undefined) subscribeOne(conn, f.topic, ref);
          else answer(conn, { type: 'error', ref, code: 'BAD_FRAME', message: 'subscribe needs topic or topics' });
          return;
        case 'unsubscribe':
          if (typeof f.topic === 'string') conn.unsubscribe(f.topic);
          if (ref !== undefined) answer(conn, { type: 'unsubscribed', topic: f.topic, ref });
          return;
        case 'event':
          void onEvent(conn, f);
          return;
        case 'ping':
          answer(conn, { type: 'pong', ref });
          return;
        default:
          answer(conn, { type: 'error', ref, code: 'BAD_FRAME', message: `Unknown frame type ${String(f.type)}` });
      }
    },
  });

  return new Promise((resolve, reject) => {
    app.listen('127.0.0.1', options.port ?? 0, (listenSocket) => {
      if (!listenSocket) {
        reject(new Error(`cannot listen on port ${options.port ?? 0}`));
        return;
      }
      const port = uWS.us_socket_local_port(listenSocket);
      let listening = true;
      const unlisten = () => {
        if (listening) uWS.us_listen_socket_close(listenSocket);
        listening = false;
      };
      resolve({
        port,
        url: `ws://127.0.0.1:${port}/live`,
        frames,
        get upgrades() {
          return upgrades;
        },
        sockets,
        publish(topic, event, data) {
          app.publish(topic, envelope(topic, event, data), false);
        },
        send(ws, event, data) {
          if (!ws.getUserData().closed) ws.send(envelope(undefined, event, data));
        },
        unlisten,
        async close(code = 1001, reason = 'going away') {
          unlisten();
          for (const ws of [...sockets]) ws.end(code, reason);
          const deadline = Date.now() + 1000;
          while (sockets.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
          app.close();
        },
      });
    });
  });
}
