// The scenarios: what each one sends, with which load generator, and which peers implement it.
import { STATIC_FILES } from '../static-fixtures.mjs';

/** Every peer, in the canonical order used for runs, tables and charts. */
export const PEER_ORDER = [
  'uws',
  'tachyon',
  'tachyon-coalesced',
  'tachyon-cors',
  'tachyon-secure-headers',
  'tachyon-rate-limit',
  'tachyon-metrics',
  'tachyon-access-log',
  'tachyon-hooks',
  'tachyon-otel',
  'tachyon-otel-off',
  'tachyon-all',
  'tachyon-mount',
  'tachyon-zod-runtime',
  'node-http',
  'express',
  'fastify',
  'hono',
  'hyper-express',
  'ultimate-express',
  'sirv',
  'ws',
  'socketio',
  'socketio-uws',
  'bun',
  'elysia',
  'deno',
];

/** The tachyon-<middleware> peers price the built-in middleware on http-realistic-get only. */
export const MIDDLEWARE_PEERS = [
  'tachyon-cors',
  'tachyon-secure-headers',
  'tachyon-rate-limit',
  'tachyon-metrics',
  'tachyon-access-log',
  'tachyon-hooks',
  'tachyon-otel',
  'tachyon-otel-off',
  'tachyon-all',
];
const HTTP_DYNAMIC = [
  'uws',
  'tachyon',
  'node-http',
  'express',
  'fastify',
  'hono',
  'hyper-express',
  'ultimate-express',
  'bun',
  'elysia',
  'deno',
];
const HTTP_STATIC = ['uws', 'tachyon', 'sirv', 'express', 'fastify'];
const WS_ECHO = ['uws', 'tachyon', 'ws', 'bun', 'deno'];
const WS_FANOUT = ['uws', 'tachyon', 'tachyon-coalesced', 'ws', 'socketio', 'socketio-uws', 'bun', 'deno'];
const WS_CONNECTIONS = ['uws', 'tachyon', 'ws', 'socketio', 'socketio-uws', 'bun', 'deno'];

/** Echo load: 50 connections each keeping 4 messages in flight (saturates one server core). */
export const ECHO_LOAD = { connections: 50, inflight: 4 };
/**
 * Fan-out load: 50 subscribers, the first 10 of them also send bursts of 10 messages, each
 * sender as fast as its own messages come back to it with at most 16 bursts on their way
 * (flow control: at most 1,600 messages in flight, under 200 KB queued per subscriber, so no
 * server ever reaches its backpressure limit). 64-byte payloads.
 */
export const FANOUT_LOAD = { subscribers: 50, senders: 10, burst: 10, intervalMs: 0, window: 16, size: 64 };
/** HTTP load: one wrk thread, 100 connections; the pipelined variant sends 10 requests per write. */
export const HTTP_LOAD = { threads: 1, connections: 100, pipeline: 10 };

/**
 * kind: 'http' (wrk) or 'ws' (bench/loadgen). unit: what the throughput counts.
 * peers: the peers that implement the scenario, in canonical order.
 */
export const SCENARIOS = {
  'http-hello': { kind: 'http', unit: 'req/s', per: 'req', path: '/', peers: HTTP_DYNAMIC, title: 'GET / → 200, empty body' },
  'http-hello-pipelined': {
    kind: 'http',
    unit: 'req/s',
    per: 'req',
    path: '/',
    pipeline: HTTP_LOAD.pipeline,
    peers: HTTP_DYNAMIC,
    title: `GET / → 200, ${HTTP_LOAD.pipeline} requests pipelined per connection`,
  },
  'http-middleware': {
    kind: 'http',
    unit: 'req/s',
    per: 'req',
    path: '/mw',
    peers: HTTP_DYNAMIC,
    title: 'GET /mw through one middleware (sets x-mw: 1)',
  },
  'http-realistic-get': {
    kind: 'http',
    unit: 'req/s',
    per: 'req',
    path: '/users/42?fields=a,b',
    peers: [...HTTP_DYNAMIC, ...MIDDLEWARE_PEERS, 'tachyon-mount', 'tachyon-zod-runtime'],
    title: 'GET /users/:id?fields=a,b: middleware, params + query validation, ~216 B JSON',
  },
  'http-realistic-post': {
    kind: 'http',
    unit: 'req/s',
    per: 'req',
    path: '/users',
    method: 'POST',
    peers: [...HTTP_DYNAMIC, 'tachyon-mount', 'tachyon-zod-runtime'],
    title: 'POST /users: middleware, 1 KB JSON body parsed and validated → 201 JSON',
  },
  'http-static-4k': {
    kind: 'http',
    unit: 'req/s',
    per: 'req',
    path: '/static/file-4k.txt',
    file: 'file-4k.txt',
    peers: HTTP_STATIC,
    title: `GET a ${STATIC_FILES['file-4k.txt']}-byte file with an ETag`,
  },
  'http-static-64k': {
    kind: 'http',
    unit: 'req/s',
    per: 'req',
    path: '/static/file-64k.txt',
    file: 'file-64k.txt',
    peers: HTTP_STATIC,
    title: `GET a ${STATIC_FILES['file-64k.txt']}-byte file with an ETag`,
  },
  'ws-echo-text-11': {
    kind: 'ws',
    mode: 'echo',
    unit: 'msg/s',
    per: 'msg',
    size: 11,
    binary: false,
    peers: WS_ECHO,
    title: 'echo of 11-byte text messages',
  },
  'ws-echo-bin-32': {
    kind: 'ws',
    mode: 'echo',
    unit: 'msg/s',
    per: 'msg',
    size: 32,
    binary: true,
    peers: WS_ECHO,
    title: 'echo of 32-byte binary messages',
  },
  'ws-echo-bin-4k': {
    kind: 'ws',
    mode: 'echo',
    unit: 'msg/s',
    per: 'msg',
    size: 4096,
    binary: true,
    peers: WS_ECHO,
    title: 'echo of 4 KiB binary messages',
  },
  'ws-echo-bin-64k': {
    kind: 'ws',
    mode: 'echo',
    unit: 'msg/s',
    per: 'msg',
    size: 65536,
    binary: true,
    peers: WS_ECHO,
    title: 'echo of 64 KiB binary messages',
  },
  'ws-fanout': {
    kind: 'ws',
    mode: 'fanout',
    unit: 'deliveries/s',
    per: 'delivery',
    peers: WS_FANOUT,
    title: `${FANOUT_LOAD.subscribers} subscribers, ${FANOUT_LOAD.senders} of them sending bursts of ${FANOUT_LOAD.burst} (at most ${FANOUT_LOAD.window} bursts each in flight); deliveries/s`,
  },
  'ws-connections-10k': {
    kind: 'ws',
    mode: 'connections',
    unit: 'conn/s',
    per: 'conn',
    count: 10_000,
    peers: WS_CONNECTIONS,
    title: '10,000 idle connections: connect rate and server memory per connection',
  },
  'ws-connections-50k': {
    kind: 'ws',
    mode: 'connections',
    unit: 'conn/s',
    per: 'conn',
    count: 50_000,
    peers: WS_CONNECTIONS,
    title: '50,000 idle connections: connect rate and server memory per connection',
  },
};

/** Peers that run only when named with --peers (a full run leaves them out): the middleware peers, tachyon-mount and tachyon-zod-runtime. */
export const OPT_IN_PEERS = [...MIDDLEWARE_PEERS, 'tachyon-mount', 'tachyon-zod-runtime'];

/** Short names accepted by --only (the quick harness's names). */
export const ALIASES = {
  hello: ['http-hello'],
  pipelined: ['http-hello-pipelined'],
  middleware: ['http-middleware'],
  realistic: ['http-realistic-get'],
  'static-4k': ['http-static-4k'],
  'static-64k': ['http-static-64k'],
  'http-realistic': ['http-realistic-get', 'http-realistic-post'],
  'http-static': ['http-static-4k', 'http-static-64k'],
  'ws-echo': ['ws-echo-text-11', 'ws-echo-bin-32', 'ws-echo-bin-4k', 'ws-echo-bin-64k'],
  'ws-connections': ['ws-connections-10k', 'ws-connections-50k'],
  http: Object.keys(SCENARIOS).filter((s) => s.startsWith('http-')),
  ws: Object.keys(SCENARIOS).filter((s) => s.startsWith('ws-')),
};

/** `npm run bench -- --quick`: the subset the quick harness always ran, plus WebSockets. */
export const QUICK = {
  scenarios: [
    'http-hello',
    'http-middleware',
    'http-realistic-get',
    'http-static-4k',
    'http-static-64k',
    'ws-echo-bin-32',
    'ws-echo-bin-4k',
    'ws-fanout',
  ],
  peers: ['uws', 'tachyon', 'tachyon-coalesced', 'express', 'sirv'],
};

/** `--smoke`: every scenario, the reference and the framework. */
export const SMOKE = { peers: ['uws', 'tachyon', 'tachyon-coalesced'] };

// Peers that serve tachyon.mjs's own /fanout route (the OpenTelemetry peers are tachyon.mjs
// with the plugin: their event and publish spans are what bench/instructions.mjs prices there).
const TACHYON_FANOUT = new Set(['tachyon', 'tachyon-coalesced', 'tachyon-otel', 'tachyon-otel-off']);

/** The wire protocol a peer speaks on the WebSocket scenarios (bench/loadgen --protocol) and its URL path. */
export function wsTarget(peer, scenario) {
  const mode = SCENARIOS[scenario].mode;
  if (peer === 'socketio' || peer === 'socketio-uws') return { protocol: 'socketio', path: '/' };
  // Raw fan-out peers forward what they receive: the loadgen sends them Tachyon's delivery
  // envelope (--envelope), so every uWS-class peer delivers the same bytes as Tachyon.
  if (mode === 'fanout')
    return TACHYON_FANOUT.has(peer) ? { protocol: 'tachyon', path: '/fanout' } : { protocol: 'raw', path: '/fanout', envelope: true };
  return { protocol: 'raw', path: '/echo' };
}

/**
 * Goals to report (never asserted). `vs`: the peer Tachyon is compared with; `min`: the
 * ratio tachyon / vs that meets it; `who`: the Tachyon variant (default 'tachyon').
 */
export const GOALS = [
  ...[
    'http-hello',
    'http-hello-pipelined',
    'http-static-4k',
    'http-static-64k',
    'ws-echo-text-11',
    'ws-echo-bin-32',
    'ws-echo-bin-4k',
    'ws-echo-bin-64k',
  ].map((s) => ({ scenario: s, vs: 'uws', min: 0.95 })),
  { scenario: 'ws-fanout', vs: 'uws', min: 1.0 },
  { scenario: 'ws-fanout', vs: 'uws', min: 1.5, who: 'tachyon-coalesced' },
  ...['http-realistic-get', 'http-realistic-post'].flatMap((s) => [
    { scenario: s, vs: 'express', min: 5 },
    { scenario: s, vs: 'fastify', min: 3 },
    { scenario: s, vs: 'hyper-express', min: 1.1 },
    { scenario: s, vs: 'ultimate-express', min: 1.1 },
  ]),
  { scenario: 'ws-fanout', vs: 'ws', min: 15 },
  { scenario: 'ws-fanout', vs: 'socketio', min: 15 },
  { scenario: 'ws-fanout', vs: 'socketio-uws', min: 15 },
];
