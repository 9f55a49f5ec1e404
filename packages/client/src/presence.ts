// Presence on the client (docs/presence.md, docs/client.md): the member type, and the topic
// listener behind `live.onPresence()`. `live.presence()` itself is one request frame (index.ts).

/** One member of a presence topic: one per id, however many sockets (tabs) it has. */
export interface PresenceMember<D = unknown> {
  id: string;
  /** What the server's `presence.data` gave the member (absent without it). */
  data?: D;
}

/** A member appeared on the topic (on any server), or is gone from all of them. */
export interface PresenceChange<D = unknown> {
  type: 'join' | 'leave';
  member: PresenceMember<D>;
}

/** The topic events the server sends on presence topics declared with `events: true`. */
export const PRESENCE_EVENTS = { join: '$join', leave: '$leave' } as const;

/** A topic listener that passes only presence events on, as changes. */
export const presenceListener =
  <D>(f: (change: PresenceChange<D>) => void) =>
  (event: string, data: unknown): void => {
    // '$join' → 'join', '$leave' → 'leave'
    if (event === '$join' || event === '$leave') f({ type: event.slice(1) as 'join' | 'leave', member: data as PresenceMember<D> });
  };
