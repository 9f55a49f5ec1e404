// natsBus() options: checked once, before anything connects.
import type { NodeConnectionOptions } from '@nats-io/transport-node';
import type { BrokerBusOptions } from '@tachyon/server';

export interface NatsBusOptions extends BrokerBusOptions {
  /**
   * `nats://[user:password@]host:port`, `tls://host:port`, or several (a NATS cluster's
   * seeds; the client learns the rest). Default `nats://127.0.0.1:4222`.
   */
  servers?: string | string[];
  /** Subject prefix: apps sharing one NATS use different prefixes. Dot-separated tokens of A-Z a-z 0-9 _ -. Default `tachyon`. */
  prefix?: string;
  /**
   * More nats.js connection options (`user`, `pass`, `token`, `authenticator`, `tls: { ca, cert, key }`,
   * `name`…). Reconnection is Tachyon's: it retries forever with backoff.
   */
  connection?: Omit<NodeConnectionOptions, 'servers'>;
}

export interface NatsBusSettings {
  servers: string[];
  prefix: string;
  connection: Omit<NodeConnectionOptions, 'servers'>;
}

export const NATS_OPTIONS = ['servers', 'prefix', 'connection'] as const;

export function natsSettings(options: NatsBusOptions): NatsBusSettings {
  const s = options.servers ?? 'nats://127.0.0.1:4222';
  const servers = typeof s === 'string' ? [s] : s;
  if (!Array.isArray(servers) || servers.length === 0 || servers.some((x) => typeof x !== 'string' || x.length === 0)) {
    throw new TypeError('natsBus(): servers must be a nats:// or tls:// URL, or a non-empty array of them');
  }
  const prefix = options.prefix ?? 'tachyon';
  if (typeof prefix !== 'string' || prefix.length > 128 || !/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(prefix)) {
    throw new TypeError('natsBus(): prefix must be dot-separated tokens of letters, digits, _ and - (at most 128 characters)');
  }
  let connection = options.connection ?? {};
  if (typeof connection !== 'object' || connection === null)
    throw new TypeError('natsBus(): connection must be an object of nats.js options');
  // nats.js ignores credentials in a server URL: take them out (nats://user:pass@host or
  // nats://token@host) and pass them as options, unless the options already give some.
  const plain: string[] = [];
  for (const server of servers) {
    const m = /^([a-z]+:\/\/)([^@/]*)@(.*)$/i.exec(server);
    if (m === null) {
      plain.push(server);
      continue;
    }
    plain.push(m[1]! + m[3]!);
    const [user, pass] = m[2]!.split(':', 2).map((x) => decodeURIComponent(x));
    if (connection.user !== undefined || connection.token !== undefined || connection.authenticator !== undefined) continue;
    connection = pass === undefined ? { ...connection, token: user } : { ...connection, user, pass };
  }
  return { servers: plain, prefix, connection };
}

// Topics are printable ASCII; a NATS subject is dot-separated tokens without spaces or the
// wildcards * and >. A topic made of safe tokens is its own subject token(s); any other is
// sent base64url-encoded behind a '~' (which the safe form never contains), so every topic
// has exactly one subject and no topic can subscribe to a wildcard.
const SAFE = /^[A-Za-z0-9_:-]+(\.[A-Za-z0-9_:-]+)*$/;

export function topicToken(topic: string): string {
  return SAFE.test(topic) ? topic : '~' + Buffer.from(topic, 'latin1').toString('base64url');
}
