export type { HistoryOptions } from './options.ts';
export type { HistoryStore, Position, Appended, HistoryRead, HistoryRequest, Unrecoverable } from './store.ts';
export { judge } from './store.ts';
export { MemoryHistoryStore } from './memory.ts';
export { positionedEnvelope } from './envelope.ts';
export { newEpoch, isEpoch } from './epoch.ts';
