// @tachyon/sveltekit/client: Svelte 5 helpers on @tachyon/client (docs/sveltekit.md).
// connection() and topic() (connection.ts); latest, count, once, crud, lookup and presence
// (state.ts), the helpers svelte-adapter-uws users know, as reactive state.
export {
  Connection,
  connection,
  Topic,
  topic,
  type ConnectionOptions,
  type Status,
  type TopicEvent,
  type TopicOptions,
} from './connection.ts';
export {
  Count,
  count,
  Crud,
  crud,
  Latest,
  latest,
  Lookup,
  lookup,
  once,
  Presence,
  presence,
  type CrudOptions,
  type LookupOptions,
  type OnConnection,
} from './state.ts';
export type { PresenceMember } from '@tachyon/client';
