import type { Logger } from './logger.ts';

/**
 * Which hops of X-Forwarded-For to believe: false (none: the socket address), true (all:
 * the leftmost entry), a number of trusted proxies in front of us, or a predicate on each
 * address from the right.
 */
export type TrustProxy = boolean | number | ((address: string, hop: number) => boolean);

/** Resolved request-id settings (Settings.requestId; from the requestId option, http/observe/request-id.ts). */
export interface RequestIdConfig {
  readonly header: string;
  /** Whether to read the incoming header; undefined: follow trustProxy. */
  readonly trustHeader: boolean | undefined;
  readonly generate: () => string;
}

/** Resolved access-log settings (Settings.accessLog; from the accessLog option, http/observe/access-log.ts). */
export interface AccessLogConfig {
  readonly level: 'info' | 'debug';
  /**
   * Requests not to log. It gets the http Request, a type core/ cannot name (http/ is above
   * it): the option's own type, AccessLogOptions.skip, is the checked one.
   */
  skip?(req: object): boolean;
}

/**
 * App-wide settings every request reads, resolved once from AppOptions and frozen by the App
 * (a cluster worker's App replaces them once, before it starts, to tag its logger). What
 * changes while the server runs is in `state`, never in the settings themselves.
 */
export interface Settings {
  readonly bodyLimit: number;
  readonly cookieSecrets: readonly string[];
  readonly trustProxy: TrustProxy;
  readonly logger: Logger;
  readonly requestTimeout: number;
  readonly exposeErrors: boolean;
  /** Check replies against routes' `response` schemas (development; http/reply-check.ts). */
  readonly validateResponses: boolean;
  /** Give Zod schemas Zod's generated parser, `z.compile` (http/schema-compile.ts). */
  readonly compileSchemas: boolean;
  /** Request ids in the response header and on log lines; null when off (docs/logging.md). */
  readonly requestId: RequestIdConfig | null;
  /** One log line per request; null when off. */
  readonly accessLog: AccessLogConfig | null;
  /** The server's runtime state: one object per App, the same across the settings it replaces. */
  readonly state: ServerState;
}

/** What changes while an App runs; read on the hot path as plain fields (no getters). */
export interface ServerState {
  /** Set when the server starts shutting down: answers close their connection. */
  draining: boolean;
  /** The app these settings belong to, for `req.app`. */
  readonly app: AppView;
}

/** What middleware and handlers may read about the app serving a request (`req.app`). */
export interface AppView {
  /** True once `close()` has started (readiness answers 503 from then on). */
  readonly draining: boolean;
  /** Open WebSocket connections. */
  readonly connections: number;
  /** Requests that outlived their uWS callback and have not finished yet. */
  readonly inflight: number;
  readonly logger: Logger;
  /** False while the app's bus reports it is not connected (`Bus.ready()`); true without a bus. */
  readonly busReady: boolean;
}

export const DEFAULT_BODY_LIMIT = 1 << 20;
export const DEFAULT_REQUEST_TIMEOUT = 30_000;
