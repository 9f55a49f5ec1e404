// Shared helpers for the client tests: real sockets only.
import { startProtocolServer } from './protocol-server.ts';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls until `check` is true or the deadline passes. */
export async function eventually(check: () => boolean, timeout = 3000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeout;
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what} not met within ${timeout} ms`);
    await sleep(5);
  }
}

/** A port nothing listens on (a listener was opened on it, then closed with no connection). */
export async function freePort(): Promise<number> {
  const s = await startProtocolServer();
  await s.close();
  return s.port;
}

/**
 * The real global WebSocket, instrumented: every text frame the client sends or receives is
 * also recorded (to check what goes on the wire against servers that do not expose frames).
 */
export function recordingWebSocket() {
  const sent: string[] = [];
  const received: string[] = [];
  let created = 0;
  class Recording extends WebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      created++;
      this.addEventListener('message', (e) => {
        if (typeof e.data === 'string') received.push(e.data);
      });
    }
    override send(data: string | ArrayBufferLike | ArrayBufferView | Blob): void {
      if (typeof data === 'string') sent.push(data);
      super.send(data as string);
    }
  }
  return {
    WebSocket: Recording,
    sent,
    received,
    get created() {
      return created;
    },
  };
}

/** Rejection reason of a promise that must reject. */
export async function rejection(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}
