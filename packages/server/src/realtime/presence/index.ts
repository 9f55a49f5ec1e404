export type { PresenceOptions, ResolvedPresenceOptions } from './options.ts';
export { PresenceTracker, type PresenceMember, type PresenceStats, type PresenceHost } from './tracker.ts';
export { PRESENCE_CHANNEL } from './wire.ts';
