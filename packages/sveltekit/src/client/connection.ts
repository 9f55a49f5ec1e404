// The connection and topics of @tachyon/sveltekit/client: Svelte 5 state on @tachyon/client.
// Values are reactive through `createSubscriber` (svelte/reactivity): a topic is subscribed
// while some effect or template reads it and unsubscribed when none does, and nothing
// connects on the server (SSR renders the initial values: status 'closed', no events).
import { createSubscriber } from 'svelte/reactivity';
import { connect, type ClientOptions, type Live, type Status } from '@tachyon/client';

export type { Status } from '@tachyon/client';

export interface ConnectionOptions extends ClientOptions {
  /** Full WebSocket URL. Default: the page's origin (ws: or wss:) + `path`. */
  url?: string;
  /** Path of the hooks.ws route when `url` is not given. Default `/ws`. */
  path?: string;
}

export interface TopicEvent<T = unknown> {
  event: string;
  data: T;
}

export interface TopicOptions {
  /** Keep only events with this name. */
  event?: string;
  /** How many of the latest events `events` keeps (oldest dropped first). Default 50. */
  limit?: number;
}

const inBrowser = (): boolean => typeof window !== 'undefined' && typeof globalThis.WebSocket === 'function';

/** A lazily opened connection: nothing happens until `live`, `status` or a topic is read in the browser. */
export class Connection {
  readonly #options: ConnectionOptions;
  #live: Live | undefined;
  readonly #watchStatus: () => void;

  constructor(options: ConnectionOptions = {}) {
    if (options.path !== undefined && (typeof options.path !== 'string' || !options.path.startsWith('/')))
      throw new TypeError('path must start with "/"');
    this.#options = options;
    this.#watchStatus = createSubscriber((update) => this.live?.onStatus(() => update()));
  }

  /** The @tachyon/client connection (opened on first use); undefined on the server. */
  get live(): Live | undefined {
    if (this.#live === undefined && inBrowser()) {
      const { url, path = '/ws', ...clientOptions } = this.#options;
      const target = url ?? (() => `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${path}`);
      this.#live = connect(target, clientOptions);
    }
    return this.#live;
  }

  /** 'connecting' | 'open' | 'reconnecting' | 'closed' (always 'closed' on the server). Reactive. */
  get status(): Status {
    this.#watchStatus();
    return this.live?.status ?? 'closed';
  }

  /** A topic as reactive state. */
  topic<T = unknown>(name: string, options?: TopicOptions): Topic<T> {
    return new Topic<T>(this, name, options);
  }

  /** Closes for good (pages rarely need this: one connection serves every component). */
  close(): void {
    this.#live?.close();
    this.#live = undefined;
  }
}

/** A topic's events as reactive state: `latest` and the last `limit` events. */
export class Topic<T = unknown> {
  readonly name: string;
  #latest: TopicEvent<T> | undefined;
  #events: readonly TopicEvent<T>[] = [];
  readonly #watch: () => void;

  constructor(connection: Connection, name: string, options: TopicOptions = {}) {
    if (typeof name !== 'string' || name === '') throw new TypeError('topic name must be a non-empty string');
    const limit = options.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 1) throw new TypeError('limit must be a positive integer');
    const only = options.event;
    this.name = name;
    this.#watch = createSubscriber((update) =>
      connection.live?.subscribe(name, (event, data) => {
        if (only !== undefined && event !== only) return;
        const entry = { event, data: data as T };
        this.#latest = entry;
        // A new array each time: `{#each topic.events}` and $derived see the change.
        this.#events =
          this.#events.length >= limit ? [...this.#events.slice(this.#events.length - limit + 1), entry] : [...this.#events, entry];
        update();
      }),
    );
  }

  /** The latest event, or undefined. Reading it (in an effect or template) subscribes. */
  get latest(): TopicEvent<T> | undefined {
    this.#watch();
    return this.#latest;
  }

  /** The latest data, or undefined. */
  get data(): T | undefined {
    this.#watch();
    return this.#latest?.data;
  }

  /** The last `limit` events, oldest first. */
  get events(): readonly TopicEvent<T>[] {
    this.#watch();
    return this.#events;
  }
}

let shared: { connection: Connection; key: string } | undefined;

/**
 * The page's shared connection to the hooks.ws route, created on first call. Options may be
 * given on every call (e.g. in the root layout) as long as they name the same URL/path. On
 * the server each call returns a fresh, inert connection (nothing is shared between requests).
 */
export function connection(options?: ConnectionOptions): Connection {
  if (!inBrowser()) return new Connection(options);
  const key = options === undefined ? '' : `${options.url ?? ''} ${options.path ?? ''}`;
  if (shared === undefined) shared = { connection: new Connection(options), key };
  else if (options !== undefined && key !== shared.key)
    throw new Error(`connection(): the shared connection already uses other options (${JSON.stringify(shared.key.trim())})`);
  return shared.connection;
}

/** Shorthand: `topic('news')` on the shared connection. */
export function topic<T = unknown>(name: string, options?: TopicOptions): Topic<T> {
  return connection().topic<T>(name, options);
}
