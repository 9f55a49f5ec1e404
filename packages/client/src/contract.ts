// The typed realtime client, inferred from the server app's type with no code generation:
// `connect<WsContract<typeof app, '/live'>>(url)`. `WsContract` reads what `app.ws` and
// `app.topic` recorded in the app's type (`'~ws'`, `'~topics'`: types that do not exist at run
// time), so `import type { app }` pulls no server code into a bundle. Types only: this module
// adds no byte to the client.
import type { EventMap, HandlerMap, Live, SubscribeOptions, TopicListener, Unsubscribe } from './api.ts';
import type { InputOf, OutputOf } from './schema-types.ts';

type WsRoutesOf<App> = App extends { readonly '~ws': infer R } ? R : {};
type TopicsOf<App> = App extends { readonly '~topics': infer T } ? T : {};

/** One client → server event: the data its schema accepts (any when it has none), the reply its `reply` schema declares (`unknown` without one). */
type RequestOf<C> = C extends { readonly schema: infer S; readonly reply: infer R }
  ? { data: S extends { readonly '~standard': unknown } ? InputOf<S> : unknown; reply: OutputOf<R> }
  : never;

/**
 * The contract of the ws route at `Path` of `App`: its events (names, data and reply types)
 * and the app's typed topics (the events each `app.topic` pattern carries). Pass it to
 * `connect`: `connect<WsContract<typeof app, '/live'>>(url)`. A path the app has no
 * `app.ws` route for fails to compile.
 */
export interface WsContract<App, Path extends keyof WsRoutesOf<App> & string> {
  readonly '~wsContract': {
    readonly requests: { [K in keyof WsRoutesOf<App>[Path] & string]: RequestOf<WsRoutesOf<App>[Path][K]> };
    readonly topics: TopicsOf<App>;
  };
}

/** A topic pattern as a template literal type: `room:*` → `room:${string}` (the server's `*`). */
type TopicPattern<P extends string> = P extends `${infer Head}*${infer Tail}` ? `${Head}${string}${TopicPattern<Tail>}` : P;

/** The event data of every pattern `T` matches, merged; `never` when it matches none. */
type Matching<Topics, T extends string> = {
  [P in keyof Topics & string]: T extends TopicPattern<P> ? { [E in keyof Topics[P] & string]: OutputOf<Topics[P][E]> } : never;
}[keyof Topics & string];
type KeysOf<U> = U extends unknown ? keyof U : never;
type Merge<U> = { [K in KeysOf<U> & string]: U extends { readonly [P in K]: infer V } ? V : never };

/** The events of `topic` with their data: from its `app.topic` pattern, or any event (`unknown` data) for an undeclared topic. */
export type TopicEvents<Topics, T extends string> = [Matching<Topics, T>] extends [never] ? EventMap : Merge<Matching<Topics, T>>;

/**
 * `Live`, with `subscribe` and `on` typed per topic from the contract's topics and `request`
 * and `emit` from the route's events. Events sent to one socket (`onEvent`) stay untyped: the
 * server does not declare them.
 */
export interface ContractLive<Requests, Topics, H = HandlerMap> extends Omit<Live<EventMap, Requests, H>, 'subscribe' | 'on'> {
  /** Every event published on `topic`: `(event, data)` narrowed together when the topic is declared. */
  subscribe<T extends string>(topic: T, listener: TopicListener<TopicEvents<Topics, T>>, options?: SubscribeOptions): Unsubscribe;
  /** One event published on `topic`. */
  on<T extends string, K extends keyof TopicEvents<Topics, T> & string>(
    topic: T,
    event: K,
    listener: (data: TopicEvents<Topics, T>[K]) => void,
    options?: SubscribeOptions,
  ): Unsubscribe;
}

/** What `connect<E, R, H>` returns: a `ContractLive` for a `WsContract`, else `Live` over the hand-written maps. */
export type LiveFor<E, R, H> = E extends { readonly '~wsContract': { readonly requests: infer Rq; readonly topics: infer T } }
  ? ContractLive<Rq, T, H>
  : Live<E, R, H>;
