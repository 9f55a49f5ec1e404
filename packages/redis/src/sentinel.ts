// Redis Sentinel for the bus and the history store: instead of one URL, the name of a
// monitored primary and some of its sentinels. node-redis's sentinel client asks them where
// the primary is, follows a failover (a replica promoted when the primary fails: the
// sentinels' `+switch-master`, and a topology scan), moves its pub/sub connection to the new
// primary and replays the subscriptions; commands sent while the primary is away wait for it.
import { createSentinel, type RedisClientOptions, type RedisSentinelType } from '@redis/client';

export interface RedisSentinelOptions {
  /** The primary's name as the sentinels monitor it (`sentinel monitor <name> …`). */
  name: string;
  /** Some of the sentinels, `{ host, port }` (the others are learnt from them). */
  nodes: readonly { host: string; port: number }[];
  /** node-redis options for the connections to the sentinels themselves (`password`, `socket: { tls }`…). */
  client?: Omit<RedisClientOptions, 'url'>;
}

export type Sentinel = RedisSentinelType<any, any, any, any, any>;

/** Checks a `sentinel` option; `where` names the function in the messages. */
export function checkSentinel(where: string, value: unknown): RedisSentinelOptions {
  const fail = (what: string): never => {
    throw new TypeError(`${where}: sentinel ${what}`);
  };
  if (typeof value !== 'object' || value === null) fail('must be an object: { name, nodes: [{ host, port }] }');
  const s = value as Record<string, unknown>;
  for (const k of Object.keys(s))
    if (k !== 'name' && k !== 'nodes' && k !== 'client') fail(`has an unknown option "${k}" (known: name, nodes, client)`);
  if (typeof s.name !== 'string' || s.name === '') fail('name must be a non-empty string (the monitored primary)');
  if (!Array.isArray(s.nodes) || s.nodes.length === 0) fail('nodes must be a non-empty array of { host, port }');
  for (const n of s.nodes as unknown[]) {
    const node = n as { host?: unknown; port?: unknown } | null;
    if (
      typeof node !== 'object' ||
      node === null ||
      typeof node.host !== 'string' ||
      !Number.isInteger(node.port) ||
      (node.port as number) < 1 ||
      (node.port as number) > 65535
    )
      fail(`nodes must be { host: string, port: 1..65535 } (got ${JSON.stringify(n)})`);
  }
  if (s.client !== undefined && (typeof s.client !== 'object' || s.client === null)) fail('client must be an object of node-redis options');
  return value as RedisSentinelOptions;
}

/**
 * A sentinel client (not connected). `client`: the options of the connections to the primary,
 * with our reconnect strategy in `socket`.
 */
export function sentinelClient(sentinel: RedisSentinelOptions, client: Omit<RedisClientOptions, 'url'>): Sentinel {
  return createSentinel({
    name: sentinel.name,
    sentinelRootNodes: sentinel.nodes.map((n) => ({ host: n.host, port: n.port })),
    nodeClientOptions: client as never,
    // The primary's connection errors as 'error' events (PrimaryWatch reads them); else node-redis
    // reports them only on an event of its internal object that the client does not pass on.
    passthroughClientErrorEvents: true,
    ...(sentinel.client === undefined ? {} : { sentinelClientOptions: sentinel.client as never }),
  }) as Sentinel;
}

/**
 * Connects `s` in the background. Its first discovery fails when no sentinel answers (node-redis
 * retries only once connected): retried after `delay(attempt)` ms until it succeeds or `stop()`.
 */
export function connectSentinel(
  s: Sentinel,
  delay: (attempt: number) => number,
  onError: (err: unknown) => void,
  onConnected: () => void,
): { stop(): void } {
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const attempt = (n: number): void =>
    void s.connect().then(
      () => onConnected(),
      (err: unknown) => {
        if (stopped) return;
        onError(err);
        timer = setTimeout(() => attempt(n + 1), delay(n));
      },
    );
  attempt(0);
  return {
    stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
    },
  };
}

/**
 * Whether the sentinel client's primary answers. node-redis keeps the client "ready" while its
 * primary is away (commands wait in its rediscovery loop, for the primary or a promoted
 * replica) and reports the lost connection only as an error event, `Master Client (host:port):
 * …` (passthroughClientErrorEvents): from that event (or a failover's `reconnecting`) `up` is
 * false until a PING through the client is answered, which is at once when the primary is back
 * or a replica promoted. `change` is called on each flip.
 */
export class PrimaryWatch {
  up = false;
  private readonly s: Sentinel;
  private readonly delay: (attempt: number) => number;
  private readonly onError: (err: unknown) => void;
  private readonly change: () => void;
  private probing = false;
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;

  /** `onError`: a failed probe (the owner listens to the client's 'error' events itself). */
  constructor(s: Sentinel, delay: (attempt: number) => number, onError: (err: unknown) => void, change: () => void) {
    this.s = s;
    this.delay = delay;
    this.onError = onError;
    this.change = change;
    s.on('error', (err: unknown) => {
      if (err instanceof Error && err.message.startsWith('Master Client (')) this.lost();
    })
      .on('reconnecting', () => this.lost())
      .on('ready', () => this.probe(0));
  }

  /** The primary is away (its connection failed, or the client moves to a promoted replica). */
  lost(): void {
    if (this.up) {
      this.up = false;
      this.change();
    }
    this.probe(0);
  }

  /** One PING at a time; it waits for a primary, and fails only when no sentinel can name one (retried). */
  probe(attempt: number): void {
    if (this.probing || this.stopped || !this.s.isOpen) return;
    this.probing = true;
    this.s.sendCommand(undefined, ['PING']).then(
      () => {
        this.probing = false;
        if (this.stopped || this.up) return;
        this.up = true;
        this.change();
      },
      (err: unknown) => {
        this.probing = false;
        if (this.stopped) return;
        this.onError(err);
        this.timer = setTimeout(() => this.probe(attempt + 1), this.delay(attempt));
      },
    );
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
  }
}
