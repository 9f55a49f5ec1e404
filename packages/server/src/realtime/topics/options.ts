// What `app.topic(pattern, options)` declares for the topics a pattern matches. Topics no
// pattern matches have none of it and pay nothing for it (docs/realtime.md, "Topic options").
import { checkKnownKeys } from '../../core/options-check.ts';
import { checkHistoryOptions, type HistoryOptions } from '../history/options.ts';
import { checkPresenceOptions, type PresenceOptions, type ResolvedPresenceOptions } from '../presence/options.ts';
import { isSchema, type Schema } from '../../http/validation.ts';
import { isValidEventName } from '../protocol.ts';

export interface TopicOptions {
  /** Keep what is published, so reconnecting clients recover what they missed. */
  history?: HistoryOptions;
  /** Track who is subscribed (`app.presence(topic)`, join/leave events). */
  presence?: boolean | PresenceOptions;
  /**
   * The events the topics carry, by name, each with its data's schema (any Standard Schema):
   * `app.publish` and `ws.publish` to these topics are type-checked, the AsyncAPI document
   * lists them, and typed clients (`WsContract`) type their subscriptions.
   */
  events?: { readonly [event: string]: Schema };
  /**
   * Validate every publish to these topics against `events` (an undeclared event or data that
   * does not fit throws a TypeError). For development and tests; off by default, and free when off.
   */
  validate?: boolean;
}

/** Options as checked when declared: absent features are null. */
export interface ResolvedTopicOptions {
  readonly pattern: string;
  readonly history: Readonly<HistoryOptions> | null;
  readonly presence: ResolvedPresenceOptions | null;
  readonly events: Readonly<Record<string, Schema>> | null;
  readonly validate: boolean;
}

const KNOWN = Object.keys({ history: true, presence: true, events: true, validate: true } satisfies Record<keyof TopicOptions, true>);

export function resolveTopicOptions(pattern: string, options: TopicOptions): ResolvedTopicOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError(`topic ${pattern}: options must be an object`);
  checkKnownKeys(`topic ${pattern}`, options, KNOWN);
  return Object.freeze({
    pattern,
    history: options.history === undefined ? null : checkHistoryOptions(pattern, options.history),
    presence: options.presence === undefined ? null : checkPresenceOptions(pattern, options.presence),
    events: options.events === undefined ? null : checkEvents(pattern, options.events),
    validate: checkValidate(pattern, options),
  });
}

function checkEvents(pattern: string, events: unknown): Readonly<Record<string, Schema>> {
  if (typeof events !== 'object' || events === null || Array.isArray(events))
    throw new TypeError(`topic ${pattern}: events must be an object of schemas by event name`);
  for (const [name, schema] of Object.entries(events)) {
    if (!isValidEventName(name)) throw new TypeError(`topic ${pattern}: invalid event name ${JSON.stringify(name)}`);
    if (!isSchema(schema))
      throw new TypeError(
        `topic ${pattern}: event ${name} must be a Standard Schema validator (e.g. a Zod schema), got ${schema === null ? 'null' : typeof schema}`,
      );
  }
  return Object.freeze({ ...(events as Record<string, Schema>) });
}

function checkValidate(pattern: string, options: TopicOptions): boolean {
  if (options.validate === undefined || options.validate === false) return false;
  if (options.validate !== true) throw new TypeError(`topic ${pattern}: validate must be a boolean`);
  if (options.events === undefined) throw new TypeError(`topic ${pattern}: validate needs events (the schemas to validate against)`);
  return true;
}
