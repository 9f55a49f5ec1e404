// app.topicStats(topic): what this process knows of one topic, for tools that look inside a
// running app (@tachyon/dashboard). Read on demand only: nothing is counted for it.
import type { Logger } from '../core/logger.ts';
import type { WsHub } from './hub.ts';

export interface TopicStats {
  readonly topic: string;
  /** Sockets (and fallback streams) subscribed in this process. */
  readonly subscribers: number;
  /** Presence members on every process this one hears from; null when the topic has no presence. */
  readonly presence: number | null;
  /** Messages its history store keeps; null without history, or when the store cannot tell (no `kept()`). */
  readonly history: number | null;
}

/** Never rejects: a store whose count fails gives null, and a log line. */
export async function topicStats(hub: WsHub, topic: string, logger: Logger): Promise<TopicStats> {
  const subscribers = hub.subscribers(topic);
  const tracker = hub.presence;
  const presence = tracker !== null && tracker.options(topic) !== null ? tracker.members(topic).length : null;
  const h = hub.historyOf(topic);
  const store = h === null ? null : hub.history.storeFor(h);
  let history: number | null = null;
  if (h !== null && store?.kept !== undefined) {
    try {
      history = await store.kept(topic, h);
    } catch (err) {
      logger.error({ err, topic }, 'history store kept() failed');
    }
  }
  return { topic, subscribers, presence, history };
}
