// The realtime half of the app's type contract (routing/contract.ts is the HTTP half): the
// events each `app.ws` route accepts, with their data and reply schemas, under `'~ws'`, and the
// events each `app.topic` pattern carries under `'~topics'`. Typed publishes and the realtime
// client (`WsContract` in @tachyon/client) read them. Types only: nothing exists at run time.
import type { Infer, Schema } from '../http/validation.ts';

/** One event of a ws route as the contract records it: its data schema and its reply schema (`unknown` when not declared). */
export interface WsEventContract<S, R> {
  readonly schema: S;
  readonly reply: R;
}

/** What `app.ws(path, …)` adds: the route's events by name (nothing for a path only known at run time). */
export type WithWsRoute<Path extends string, E, Rp> = string extends Path
  ? {}
  : {
      readonly '~ws': {
        // `keyof Rp` too: it names every event, also those inference leaves out of `E` (behavior.ts).
        readonly [P in Path]: {
          readonly [K in keyof E | keyof Rp]: WsEventContract<K extends keyof E ? E[K] : unknown, K extends keyof Rp ? Rp[K] : unknown>;
        };
      };
    };

/** What `app.topic(pattern, { events })` adds: the pattern's event schemas by name. */
export type WithTopic<Pattern extends string, Events> = string extends Pattern
  ? {}
  : { readonly '~topics': { readonly [P in Pattern]: Events } };

/** The ws routes of an App type: path → event name → `{ schema, reply }`. */
export type WsRoutesOf<T> = T extends { readonly '~ws': infer R } ? R : {};
/** The typed topics of an App type: pattern → event name → schema. */
export type TopicsOf<T> = T extends { readonly '~topics': infer R } ? R : {};

/** A topic pattern as a template literal type: `room:*` → `room:${string}`. */
export type TopicPattern<P extends string> = P extends `${infer Head}*${infer Tail}` ? `${Head}${string}${TopicPattern<Tail>}` : P;

/** The event schemas of every declared pattern `topic` matches (never when it matches none). */
export type TopicEventsFor<Topics, T extends string> = {
  [P in keyof Topics & string]: T extends TopicPattern<P> ? Topics[P] : never;
}[keyof Topics & string];

/** `[event, data, options?]` per declared event (data optional when the schema accepts undefined). */
type EventArgs<Events, O> = Events extends unknown
  ? { [K in keyof Events & string]: Args<K, Infer<Events[K]>, O> }[keyof Events & string]
  : never;

// Written out rather than spread (`[...A, options?: O]`): overloads over spread tuples do not
// match an implementation signature.
type Args<K, D, O> = [O] extends [never]
  ? undefined extends D
    ? [event: K, data?: D]
    : [event: K, data: D]
  : undefined extends D
    ? [event: K, data?: D, options?: O]
    : [event: K, data: D, options?: O];

/**
 * What a publish to `topic` takes after the topic: a declared event and its data when the
 * topic matches an `app.topic` pattern with `events`, else any event and data (untyped). `O`:
 * the publish options, when the publish takes some (`app.publish`; `ws.publish` takes none).
 */
export type PublishArgs<Topics, T extends string, O = never> = [TopicEventsFor<Topics, T>] extends [never]
  ? Args<string, unknown, O>
  : EventArgs<TopicEventsFor<Topics, T>, O>;

/** What `app.topic(pattern, options)` adds: its `events` schemas, or nothing when it declares none (its publishes stay untyped). */
export type WithTopicOptions<Pattern extends string, O> = O extends { readonly events: infer E extends { readonly [name: string]: Schema } }
  ? WithTopic<Pattern, E>
  : {};
