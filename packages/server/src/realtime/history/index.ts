export type { HistoryOptions } from './options.ts';
