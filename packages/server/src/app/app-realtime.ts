// The realtime side of the App facade: how a WebSocket route is described (routes(), onRoute),
// topic declarations, presence, the bus's readiness, topicStats()'s check, and the hub a
// cluster worker switches to. The App's public methods (app.ts) keep their signatures and docs
// and call these in one line; each takes the hub (or what else it needs) as an argument,
// because joinCluster() replaces the App's hub and these must always use the current one.
import { WsHub } from '../realtime/hub.ts';
import { topicStats, type TopicStats } from '../realtime/topic-stats.ts';
import type { TopicOptions } from '../realtime/topics/index.ts';
import type { PresenceMember } from '../realtime/presence/index.ts';
import type { WsRouteSpec } from '../realtime/behavior.ts';
import type { Bus } from '../realtime/bus/index.ts';
import type { Logger } from '../core/logger.ts';
import type { WsRouteInfo } from '../routing/route-info.ts';
import type { Schema } from '../http/validation.ts';
import type { ClusterMember } from './cluster-member.ts';

/** A WebSocket route's description (routes(), onRoute). */
export function wsInfo(r: WsRouteSpec): WsRouteInfo {
  return Object.freeze({
    kind: 'ws' as const,
    path: r.pattern.path,
    events: Object.freeze(
      Object.entries(r.behavior.events ?? {}).map(([name, def]) =>
        Object.freeze({
          name,
          ...(def.schema !== undefined && { schema: def.schema as Schema }),
          ...(def.reply !== undefined && { reply: def.reply as Schema }),
          ...(def.binary !== undefined && { binary: typeof def.binary === 'number' ? def.binary : def.binary.code }),
          ...(typeof def.binary === 'object' && def.binary.encode !== undefined && { binaryReply: true as const }),
        }),
      ),
    ),
  });
}

/** app.topic() on `hub`: the pattern's options, and presence tracking from its first presence pattern. */
export function declareTopic(hub: WsHub, pattern: string, options: TopicOptions, presenceHeartbeat: number): void {
  const declared = hub.defineTopic(pattern, options);
  if (declared.presence !== null) hub.enablePresence(presenceHeartbeat);
}

/** app.presence(): the members of a presence topic; throws (app.presence() is async: it rejects) when `topic` has no presence. */
export function presenceMembers<Data>(hub: WsHub, topic: string): PresenceMember<Data>[] {
  const tracker = hub.presence;
  if (tracker === null || tracker.options(topic) === null)
    throw new TypeError(`topic ${JSON.stringify(topic)} has no presence: declare it with app.topic(pattern, { presence: true })`);
  return tracker.members(topic) as PresenceMember<Data>[];
}

/** app.busReady: false while the bus says it is disconnected; true for a bus without `ready()`, false for one whose `ready()` throws. */
export function busReady(hub: WsHub): boolean {
  const bus = hub.bus;
  if (typeof bus.ready !== 'function') return true;
  try {
    return bus.ready() === true;
  } catch {
    return false;
  }
}

/** app.topicStats(): a bad topic rejects, as the lookup itself would. */
export function checkedTopicStats(hub: WsHub, topic: string, logger: Logger): Promise<TopicStats> {
  if (typeof topic !== 'string' || topic === '')
    return Promise.reject(new TypeError('app.topicStats(topic): topic must be a non-empty string'));
  return topicStats(hub, topic, logger);
}

/**
 * The hub of an App joining a cluster (joinCluster()): the worker's bus, the cluster's history
 * store and idempotency keys, and the topics declared so far, declared again with their checks
 * (a throw leaves the app as it was: nothing is assigned until this returns).
 */
export function clusterHub(
  member: ClusterMember,
  own: { coalescePublishes: boolean | number; bus: Bus | undefined; presenceHeartbeat: number },
  topicDecls: readonly [pattern: string, options: TopicOptions][],
  logger: Logger,
): WsHub {
  const hub = new WsHub(own.coalescePublishes, member.bus(own.bus), logger);
  // History topics share the primary's memory store, unless there is a bus to other servers,
  // the app's or the primary's relay (then a store those servers share too: redisHistory).
  if (member.history !== undefined && own.bus === undefined) hub.history.useDefault(member.history);
  // Retried requests run once in the whole cluster: a resend may reconnect to another worker.
  hub.sharedKeys = member.keys ?? null;
  for (const [pattern, options] of topicDecls) declareTopic(hub, pattern, options, own.presenceHeartbeat);
  return hub;
}
