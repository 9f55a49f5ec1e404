// The environment variables of @sveltejs/adapter-node, read once at startup with the same
// names, defaults and prefix rule, so an app can switch adapters without surprises. Bad
// values stop the server with the variable's name instead of misbehaving later.

export interface ServerEnv {
  host: string;
  port: number;
  /** ORIGIN: the public origin, overriding Host and the protocol/host/port headers. */
  origin: string | undefined;
  protocolHeader: string;
  hostHeader: string;
  portHeader: string;
  addressHeader: string;
  xffDepth: number;
  /** BODY_SIZE_LIMIT in bytes (Infinity: no limit). */
  bodySizeLimit: number;
  /** SHUTDOWN_TIMEOUT in seconds. */
  shutdownTimeout: number;
  /** IDLE_TIMEOUT in seconds; only meaningful with socket activation, which is not supported: accepted and ignored. */
  idleTimeout: number;
  sslCert: string | undefined;
  sslKey: string | undefined;
  /** WORKERS: worker threads under Tachyon's cluster() ('auto': one per core); undefined (unset): one process, no threads. */
  workers: number | 'auto' | undefined;
}

/** Variables read with the prefix (as adapter-node's list, plus SSL_CERT/SSL_KEY and ORIGIN). */
const EXPECTED = new Set([
  'SOCKET_PATH',
  'HOST',
  'PORT',
  'ORIGIN',
  'XFF_DEPTH',
  'ADDRESS_HEADER',
  'PROTOCOL_HEADER',
  'HOST_HEADER',
  'PORT_HEADER',
  'BODY_SIZE_LIMIT',
  'SHUTDOWN_TIMEOUT',
  'IDLE_TIMEOUT',
  'KEEP_ALIVE_TIMEOUT',
  'HEADERS_TIMEOUT',
  'SSL_CERT',
  'SSL_KEY',
  'WORKERS',
]);

const INTEGER = /^\d+$/;
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function invalid(name: string, value: string, why: string): never {
  throw new Error(`Invalid value for environment variable ${name}: ${JSON.stringify(value)} (${why})`);
}

/** `512K`, `1M`, `2G`, a plain number of bytes, or `Infinity` (adapter-node's BODY_SIZE_LIMIT syntax). */
export function parseBytes(value: string): number {
  const v = value.trim();
  if (v === 'Infinity') return Infinity;
  const m = /^(\d+(?:\.\d+)?)([KMG]?)$/i.exec(v);
  if (!m) return NaN;
  const mult = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[m[2]!.toUpperCase() as '' | 'K' | 'M' | 'G'];
  return Math.floor(Number(m[1]) * mult);
}

export function readEnv(prefix: string, bakedOrigin: string | undefined, env: NodeJS.ProcessEnv = process.env): ServerEnv {
  if (prefix) {
    for (const name in env) {
      if (name.startsWith(prefix) && !EXPECTED.has(name.slice(prefix.length))) {
        throw new Error(
          `You should change envPrefix (${prefix}) to avoid conflicts with existing environment variables: unexpectedly saw ${name}`,
        );
      }
    }
  }
  const get = (name: string): string | undefined => env[prefix + name];
  const seconds = (name: string, fallback: number): number => {
    const raw = get(name);
    if (raw === undefined || raw === '') return fallback;
    if (!INTEGER.test(raw)) invalid(prefix + name, raw, 'should be a non-negative integer number of seconds');
    return Number.parseInt(raw, 10);
  };
  const header = (name: string): string => {
    const raw = get(name);
    if (raw === undefined || raw === '') return '';
    if (!HEADER_NAME.test(raw)) invalid(prefix + name, raw, 'should be an HTTP header name');
    return raw.toLowerCase();
  };

  if (get('SOCKET_PATH'))
    throw new Error(
      `${prefix}SOCKET_PATH is not supported by @tachyon/sveltekit yet: listen on HOST and PORT (a proxy can forward a Unix socket to them)`,
    );
  if (env.LISTEN_FDS && env.LISTEN_FDS !== '0')
    throw new Error('systemd socket activation (LISTEN_FDS) is not supported by @tachyon/sveltekit');

  const host = get('HOST') || '0.0.0.0';
  const portRaw = get('PORT') || '3000';
  if (!INTEGER.test(portRaw) || Number(portRaw) > 65535) invalid(prefix + 'PORT', portRaw, 'should be a port number from 0 to 65535');

  let origin = get('ORIGIN') || bakedOrigin || undefined;
  if (origin !== undefined) {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      invalid(get('ORIGIN') ? prefix + 'ORIGIN' : 'paths.origin', origin, 'should be an origin like https://example.com');
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.pathname !== '/' || url.search || url.hash || url.username) {
      invalid(get('ORIGIN') ? prefix + 'ORIGIN' : 'paths.origin', origin, 'should be an origin like https://example.com, without a path');
    }
    origin = url.origin;
  }

  const xffRaw = get('XFF_DEPTH') || '1';
  if (!INTEGER.test(xffRaw) || Number(xffRaw) < 1) invalid(prefix + 'XFF_DEPTH', xffRaw, 'should be a positive integer');

  const limitRaw = get('BODY_SIZE_LIMIT') || '512K';
  const bodySizeLimit = parseBytes(limitRaw);
  if (Number.isNaN(bodySizeLimit))
    invalid(prefix + 'BODY_SIZE_LIMIT', limitRaw, 'should be a number of bytes, with an optional K, M or G suffix, or Infinity');

  const sslCert = get('SSL_CERT') || undefined;
  const sslKey = get('SSL_KEY') || undefined;
  if ((sslCert === undefined) !== (sslKey === undefined)) throw new Error(`${prefix}SSL_CERT and ${prefix}SSL_KEY must be set together`);

  const workersRaw = get('WORKERS')?.trim() || undefined;
  if (workersRaw !== undefined && workersRaw !== 'auto' && !(INTEGER.test(workersRaw) && Number(workersRaw) <= 1024))
    invalid(prefix + 'WORKERS', workersRaw, "should be 'auto' or a number of worker threads from 0 to 1024");

  return {
    host,
    port: Number(portRaw),
    origin,
    protocolHeader: header('PROTOCOL_HEADER'),
    hostHeader: header('HOST_HEADER'),
    portHeader: header('PORT_HEADER'),
    addressHeader: header('ADDRESS_HEADER'),
    xffDepth: Number(xffRaw),
    bodySizeLimit,
    shutdownTimeout: seconds('SHUTDOWN_TIMEOUT', 30),
    idleTimeout: seconds('IDLE_TIMEOUT', 0),
    sslCert,
    sslKey,
    workers: workersRaw === undefined || workersRaw === 'auto' ? workersRaw : Number(workersRaw),
  };
}
