// Request deduplication: concurrent anonymous GET/HEAD requests for the same URL run the
// handler once; the others get a copy of its response.
//
// Safety rules (those of the uWS SvelteKit adapter that introduced the idea, plus the host
// in the key: keyed on the URL alone, one host's page would be served to another):
// - key = method + host + URL; only GET and HEAD;
// - never for requests with Cookie or Authorization, or with `X-No-Dedup: 1`;
// - a response is shared only without Set-Cookie, with no Vary other than Accept-Encoding,
//   and with a body of at most 512 KiB; otherwise each waiting request runs the handler itself;
// - at most 500 keys in flight (unique URLs cannot grow the table without bound).
/** What the table reads from a request (Request implements it; no import, so no cycle). */
export interface DedupRequest {
  readonly method: string;
  readonly url: string;
  header(name: string): string | undefined;
}

export const MAX_SHARED_BODY = 512 * 1024;
const MAX_KEYS = 500;

/** A finished response, as captured before compression (each follower negotiates its own). */
export interface SharedResponse {
  status: number;
  headers: readonly string[];
  body: string | Uint8Array | ArrayBuffer | undefined;
}

type Waiter = (shared: SharedResponse | null) => void;

export class DedupTable {
  private readonly inflight = new Map<string, Waiter[]>();

  get size(): number {
    return this.inflight.size;
  }

  /** The key for a request that may be deduplicated, or null. */
  keyFor(req: DedupRequest): string | null {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return null;
    if (req.header('cookie') !== undefined || req.header('authorization') !== undefined) return null;
    if (req.header('x-no-dedup') === '1') return null;
    return `${method} ${req.header('host') ?? ''} ${req.url}`;
  }

  /** Followers: resolves with the leader's response, or null when it cannot be shared. */
  follow(key: string): Promise<SharedResponse | null> | null {
    const waiters = this.inflight.get(key);
    if (waiters === undefined) return null;
    return new Promise((resolve) => waiters.push(resolve));
  }

  /** Makes the caller the leader for `key`; false when the table is full. */
  lead(key: string): boolean {
    if (this.inflight.size >= MAX_KEYS) return false;
    this.inflight.set(key, []);
    return true;
  }

  /** The leader finished: hand its response (or null) to everyone waiting. Called once. */
  settle(key: string, shared: SharedResponse | null): void {
    const waiters = this.inflight.get(key);
    if (waiters === undefined) return;
    this.inflight.delete(key);
    for (const wake of waiters) wake(shared);
  }
}

/** May this response be handed to other clients? */
export function shareable(headers: readonly string[] | null, bodyLength: number): boolean {
  if (bodyLength > MAX_SHARED_BODY) return false;
  if (headers === null) return true;
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i];
    if (name === 'set-cookie') return false;
    if (name === 'vary') {
      for (const part of headers[i + 1]!.split(',')) {
        const v = part.trim().toLowerCase();
        if (v !== '' && v !== 'accept-encoding') return false;
      }
    }
  }
  return true;
}
