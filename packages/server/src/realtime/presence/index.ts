export type { PresenceOptions } from './options.ts';
