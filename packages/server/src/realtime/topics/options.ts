// What `app.topic(pattern, options)` declares for the topics a pattern matches. Topics no
// pattern matches have none of it and pay nothing for it (docs/realtime.md, "Topic options").
import { checkKnownKeys } from '../../core/options-check.ts';
import { checkHistoryOptions, type HistoryOptions } from '../history/options.ts';
import { checkPresenceOptions, type PresenceOptions, type ResolvedPresenceOptions } from '../presence/options.ts';

export interface TopicOptions {
  /** Keep what is published, so reconnecting clients recover what they missed. */
  history?: HistoryOptions;
  /** Track who is subscribed (`app.presence(topic)`, join/leave events). */
  presence?: boolean | PresenceOptions;
}

/** Options as checked when declared: absent features are null. */
export interface ResolvedTopicOptions {
  readonly pattern: string;
  readonly history: Readonly<HistoryOptions> | null;
  readonly presence: ResolvedPresenceOptions | null;
}

const KNOWN = Object.keys({ history: true, presence: true } satisfies Record<keyof TopicOptions, true>);

export function resolveTopicOptions(pattern: string, options: TopicOptions): ResolvedTopicOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError(`topic ${pattern}: options must be an object`);
  checkKnownKeys(`topic ${pattern}`, options, KNOWN);
  return Object.freeze({
    pattern,
    history: options.history === undefined ? null : checkHistoryOptions(pattern, options.history),
    presence: options.presence === undefined ? null : checkPresenceOptions(pattern, options.presence),
  });
}
