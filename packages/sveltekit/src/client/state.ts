// The svelte-adapter-uws style helpers, as Svelte 5 reactive state on the shared connection:
// latest, count, once, crud, lookup, presence. Each one subscribes to its topic while
// something reads it (createSubscriber, as Topic does) and holds plain values in between, so
// SSR renders the initial values and nothing connects on the server.
import { createSubscriber } from 'svelte/reactivity';
import type { PresenceMember } from '@tachyon/client';
import { connection, type Connection } from './connection.ts';

/** Which connection a helper uses. Default: the page's shared `connection()`. */
export interface OnConnection {
  connection?: Connection;
}

function checkTopic(name: string): void {
  if (typeof name !== 'string' || name === '') throw new TypeError('topic name must be a non-empty string');
}

/**
 * Subscribes to `name` while the returned function is called in a reactive context; `on`
 * applies an event and returns false when it changed nothing (no re-render then).
 */
function watchTopic(conn: Connection, name: string, on: (event: string, data: unknown) => boolean): () => void {
  checkTopic(name);
  return createSubscriber((update) => conn.live?.subscribe(name, (event, data) => on(event, data) && update()));
}

/** The latest data of one event on a topic (any event when `event` is omitted). */
export class Latest<T = unknown> {
  #value: T | undefined;
  readonly #watch: () => void;

  constructor(topic: string, event?: string, initial?: T, options: OnConnection = {}) {
    this.#value = initial;
    this.#watch = watchTopic(options.connection ?? connection(), topic, (e, data) => {
      if (event !== undefined && e !== event) return false;
      this.#value = data as T;
      return true;
    });
  }

  /** The latest data, or the initial value until an event arrives. */
  get value(): T | undefined {
    this.#watch();
    return this.#value;
  }
}

/** `latest('board', 'headline', data.headline)`: the latest `headline` event's data on `board`. */
export function latest<T = unknown>(topic: string, event?: string, initial?: T, options?: OnConnection): Latest<T> {
  return new Latest<T>(topic, event, initial, options);
}

/** A number kept by a topic's `set` (data: the number), `increment` and `decrement` (data: the step, default 1) events. */
export class Count {
  #value: number;
  readonly #watch: () => void;

  constructor(topic: string, initial = 0, options: OnConnection = {}) {
    if (typeof initial !== 'number') throw new TypeError('count(): the initial value must be a number');
    this.#value = initial;
    this.#watch = watchTopic(options.connection ?? connection(), topic, (event, data) => {
      const n = typeof data === 'number' && Number.isFinite(data) ? data : undefined;
      if (event === 'set' && n !== undefined) this.#value = n;
      else if (event === 'increment') this.#value += n ?? 1;
      else if (event === 'decrement') this.#value -= n ?? 1;
      else return false;
      return true;
    });
  }

  get value(): number {
    this.#watch();
    return this.#value;
  }
}

/** `count('online')`: a counter the server drives with `set` / `increment` / `decrement` events. */
export function count(topic: string, initial?: number, options?: OnConnection): Count {
  return new Count(topic, initial, options);
}

/**
 * The data of the next `event` on `topic` (any event when omitted), then unsubscribes. Rejects
 * on the server (nothing connects there) and after `timeout` ms when given.
 */
export function once<T = unknown>(topic: string, event?: string, options: OnConnection & { timeout?: number } = {}): Promise<T> {
  checkTopic(topic);
  const live = (options.connection ?? connection()).live;
  if (live === undefined) return Promise.reject(new Error('once(): only in the browser (nothing connects during SSR)'));
  return new Promise<T>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const off = live.subscribe(topic, (e, data) => {
      if (event !== undefined && e !== event) return;
      done();
      resolve(data as T);
    });
    const done = () => {
      off();
      clearTimeout(timer);
    };
    if (options.timeout !== undefined)
      timer = setTimeout(() => {
        done();
        reject(new Error(`once(${JSON.stringify(topic)}): no ${event ?? 'event'} within ${options.timeout} ms`));
      }, options.timeout);
  });
}

/** The key of an item, or of a `deleted` event's data (the item or its key alone), as a string. */
function keyOf(data: unknown, key: string): string | undefined {
  const k = typeof data === 'object' && data !== null ? (data as Record<string, unknown>)[key] : data;
  return typeof k === 'string' || typeof k === 'number' ? String(k) : undefined;
}

export interface CrudOptions<T> extends OnConnection {
  /** The field that identifies an item. Default `'id'`. */
  key?: keyof T & string;
  /** The items to start from: an array (from `load`), or a function that loads them in the browser, once, when first read. */
  initial?: readonly T[] | (() => readonly T[] | Promise<readonly T[]>);
}

/**
 * A keyed collection kept in sync by a topic's `created`, `updated` (the whole item; an
 * unknown key is added) and `deleted` (the item or its key) events, in arrival order.
 */
export class Crud<T extends object = Record<string, unknown>> {
  #items: readonly T[] = [];
  #loading = false;
  #error: unknown;
  /** Events that arrived while the initial load ran: applied on top of what it returned. */
  #pending: [string, unknown][] | undefined;
  readonly #key: string;
  readonly #watch: () => void;

  constructor(topic: string, options: CrudOptions<T> = {}) {
    checkTopic(topic);
    const key = (this.#key = options.key ?? 'id');
    if (typeof key !== 'string' || key === '') throw new TypeError('crud(): key must be a non-empty string');
    const initial = options.initial;
    if (Array.isArray(initial)) this.#items = [...initial];
    else if (typeof initial === 'function') this.#loading = true;
    else if (initial !== undefined) throw new TypeError('crud(): initial must be an array or a function that returns one');
    const conn = options.connection ?? connection();
    this.#watch = createSubscriber((update) => {
      const live = conn.live;
      if (live === undefined) return;
      if (typeof initial === 'function' && this.#loading && this.#pending === undefined) {
        const pending: [string, unknown][] = (this.#pending = []);
        const settle = () => {
          for (const [event, data] of pending) this.#apply(event, data);
          this.#pending = undefined;
          this.#loading = false;
          update();
        };
        Promise.resolve()
          .then(initial)
          .then(
            (items) => {
              if (!Array.isArray(items)) throw new TypeError('crud(): the initial load must return an array');
              this.#items = [...items];
              settle();
            },
            (err: unknown) => {
              this.#error = err;
              settle();
            },
          )
          .catch((err: unknown) => {
            this.#error = err;
            settle();
          });
      }
      return live.subscribe(topic, (event, data) => {
        if (this.#pending !== undefined) this.#pending.push([event, data]);
        else if (this.#apply(event, data)) update();
      });
    });
  }

  #apply(event: string, data: unknown): boolean {
    if (event !== 'created' && event !== 'updated' && event !== 'deleted') return false;
    const k = keyOf(data, this.#key);
    if (k === undefined) return false;
    const at = this.#items.findIndex((item) => keyOf(item, this.#key) === k);
    if (event === 'deleted') {
      if (at === -1) return false;
      this.#items = this.#items.filter((_, i) => i !== at);
    } else if (typeof data !== 'object' || data === null) return false;
    else if (at === -1) this.#items = [...this.#items, data as T];
    else this.#items = this.#items.map((item, i) => (i === at ? (data as T) : item));
    return true;
  }

  /** The items, in arrival order (a new array on each change). */
  get items(): readonly T[] {
    this.#watch();
    return this.#items;
  }

  /** The item with this key, or undefined. */
  get(key: string | number): T | undefined {
    this.#watch();
    return this.#items.find((item) => keyOf(item, this.#key) === String(key));
  }

  /** True while the initial load (a function) runs. */
  get loading(): boolean {
    this.#watch();
    return this.#loading;
  }

  /** What the initial load threw, if it did (the events still apply). */
  get error(): unknown {
    this.#watch();
    return this.#error;
  }
}

/** `crud('todos', { initial: data.todos })`: the collection, kept in sync by created/updated/deleted events. */
export function crud<T extends object = Record<string, unknown>>(topic: string, options?: CrudOptions<T>): Crud<T> {
  return new Crud<T>(topic, options);
}

export interface LookupOptions<T> extends OnConnection {
  /** The field that identifies an item. Default `'id'`. */
  key?: keyof T & string;
  /** The item as loaded (from `load`), until an event about it arrives. */
  initial?: T;
}

/** One item of a keyed topic (the `crud` events), by its key: `value` is undefined once deleted. */
export class Lookup<T extends object = Record<string, unknown>> {
  #value: T | undefined;
  readonly #watch: () => void;

  constructor(topic: string, id: string | number, options: LookupOptions<T> = {}) {
    if (typeof id !== 'string' && typeof id !== 'number') throw new TypeError('lookup(): the key must be a string or a number');
    const key = options.key ?? 'id';
    const want = String(id);
    this.#value = options.initial;
    this.#watch = watchTopic(options.connection ?? connection(), topic, (event, data) => {
      if ((event !== 'created' && event !== 'updated' && event !== 'deleted') || keyOf(data, key) !== want) return false;
      if (event === 'deleted') this.#value = undefined;
      else if (typeof data === 'object' && data !== null) this.#value = data as T;
      else return false;
      return true;
    });
  }

  get value(): T | undefined {
    this.#watch();
    return this.#value;
  }
}

/** `lookup('todos', 42, { initial: data.todo })`: item 42, kept in sync by the topic's created/updated/deleted events. */
export function lookup<T extends object = Record<string, unknown>>(
  topic: string,
  id: string | number,
  options?: LookupOptions<T>,
): Lookup<T> {
  return new Lookup<T>(topic, id, options);
}

/**
 * Who is on a presence topic (docs/presence.md): the list is asked for when first read and
 * after each reconnect, and kept current by join/leave events (the topic needs
 * `events: true` on the server; without it the list is only refreshed on reconnect).
 * Reading it makes this page a member, as subscribing does.
 */
export class Presence<D = unknown> {
  #members: readonly PresenceMember<D>[] = [];
  readonly #watch: () => void;

  constructor(topic: string, options: OnConnection = {}) {
    checkTopic(topic);
    const conn = options.connection ?? connection();
    this.#watch = createSubscriber((update) => {
      const live = conn.live;
      if (live === undefined) return;
      const byId = new Map<string, PresenceMember<D>>();
      const changed = () => {
        this.#members = [...byId.values()];
        update();
      };
      const offChanges = live.onPresence<D>(topic, ({ type, member }) => {
        if (type === 'join') byId.set(member.id, member);
        else byId.delete(member.id);
        changed();
      });
      // The list answers after the subscription (one socket, in order): it includes this page.
      const load = () =>
        live.presence<D>(topic).then(
          (list) => {
            byId.clear();
            for (const m of list) byId.set(m.id, m);
            changed();
          },
          () => {}, // closed or refused: the list stays as it was
        );
      void load();
      const offStatus = live.onStatus((status) => status === 'open' && void load());
      return () => {
        offChanges();
        offStatus();
      };
    });
  }

  /** The members, one per id (however many tabs it has). */
  get members(): readonly PresenceMember<D>[] {
    this.#watch();
    return this.#members;
  }

  get count(): number {
    return this.members.length;
  }
}

/** `presence('room:lobby')`: the members of a presence topic, live. */
export function presence<D = unknown>(topic: string, options?: OnConnection): Presence<D> {
  return new Presence<D>(topic, options);
}
