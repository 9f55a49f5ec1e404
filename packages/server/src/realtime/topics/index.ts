export { TopicRegistry } from './registry.ts';
export type { TopicOptions, ResolvedTopicOptions } from './options.ts';
