// Cluster-wide subscriber counts, approximately (docs/scaling.md, "subscribers()"). Brokers
// count connections, not WebSockets (Redis's PUBSUB NUMSUB says how many *servers* listen),
// so each server announces its own counts: a snapshot of every topic it has subscribers for,
// on the presence channel, every `interval` ms and shortly after its interest changes. Each
// server keeps the others' latest snapshots and forgets a server it has not heard from for
// three intervals (crashed, or cut off from the broker).

export interface PresenceSnapshot {
  /** Milliseconds after which the receiver forgets this snapshot unless a newer one came. */
  ttl: number;
  counts: [topic: string, subscribers: number][];
}

interface Peer {
  counts: Map<string, number>;
  expires: number;
}

const MAX_TOPICS = 1_000_000;

export class Presence {
  private readonly peers = new Map<string, Peer>();

  /** Subscribers of `topic` on the other servers (not this one). */
  others(topic: string): number {
    let total = 0;
    for (const counts of this.live()) total += counts.get(topic) ?? 0;
    return total;
  }

  /** Subscribers per topic on the other servers, every topic (the cluster's primary relay hands them to its workers). */
  totals(): Map<string, number> {
    const totals = new Map<string, number>();
    for (const counts of this.live()) for (const [topic, count] of counts) totals.set(topic, (totals.get(topic) ?? 0) + count);
    return totals;
  }

  /** The origins of the servers heard from recently that have subscribers of `topic` (requestAll waits for them). */
  holders(topic: string): Set<string> {
    const now = Date.now();
    const found = new Set<string>();
    for (const [origin, peer] of this.peers) if (peer.expires >= now && (peer.counts.get(topic) ?? 0) > 0) found.add(origin);
    return found;
  }

  /** The counts of each server heard from recently, forgetting the others on the way. */
  private *live(): Generator<Map<string, number>> {
    const now = Date.now();
    for (const [origin, peer] of this.peers) {
      if (peer.expires < now) this.peers.delete(origin);
      else yield peer.counts;
    }
  }

  /** Number of other servers heard from recently. */
  get servers(): number {
    const now = Date.now();
    let n = 0;
    for (const peer of this.peers.values()) if (peer.expires >= now) n++;
    return n;
  }

  /** Encodes this server's snapshot. */
  static encode(ttl: number, counts: Iterable<[string, number]>): string {
    const list: [string, number][] = [];
    for (const entry of counts) if (entry[1] > 0) list.push(entry);
    return JSON.stringify({ ttl, counts: list } satisfies PresenceSnapshot);
  }

  /** Takes a snapshot from another server. Returns why it was refused, or null. Never throws. */
  receive(origin: string, text: string): string | null {
    let snapshot: unknown;
    try {
      snapshot = JSON.parse(text);
    } catch {
      return 'presence is not JSON';
    }
    if (typeof snapshot !== 'object' || snapshot === null) return 'presence is not an object';
    const { ttl, counts } = snapshot as Partial<PresenceSnapshot>;
    if (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl <= 0 || ttl > 3_600_000) return 'presence ttl invalid';
    if (!Array.isArray(counts) || counts.length > MAX_TOPICS) return 'presence counts invalid';
    const map = new Map<string, number>();
    for (const entry of counts) {
      if (
        !Array.isArray(entry) ||
        typeof entry[0] !== 'string' ||
        typeof entry[1] !== 'number' ||
        !Number.isSafeInteger(entry[1]) ||
        entry[1] < 0
      )
        return 'presence entry invalid';
      map.set(entry[0], entry[1]);
    }
    if (map.size === 0) this.peers.delete(origin);
    else this.peers.set(origin, { counts: map, expires: Date.now() + ttl });
    return null;
  }

  clear(): void {
    this.peers.clear();
  }
}
