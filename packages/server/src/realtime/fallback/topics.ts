// Topic subscribers on the fallback transport. uWS's C++ pub/sub only reaches WebSockets, so
// an SSE session's topics live here, and every hub fan-out that goes through uWS also walks
// this index (hub.ts `fanOut`). It exists only on apps with a `fallback: true` route: the
// WebSocket hot path of other apps pays one null check.

/** A session as the index sees it (connection.ts): declared here so the index needs nothing else. */
export interface SseSubscriber {
  /** 1: written, 0: queued, 2: dropped. */
  send(message: string): number;
}

export class SseTopics {
  private readonly byTopic = new Map<string, Set<SseSubscriber>>();

  add(c: SseSubscriber, topic: string): void {
    const set = this.byTopic.get(topic);
    if (set === undefined) this.byTopic.set(topic, new Set([c]));
    else set.add(c);
  }

  remove(c: SseSubscriber, topic: string): void {
    const set = this.byTopic.get(topic);
    if (set === undefined || !set.delete(c)) return;
    if (set.size === 0) this.byTopic.delete(topic);
  }

  count(topic: string): number {
    return this.byTopic.get(topic)?.size ?? 0;
  }

  /** Writes `message` to every session on `topic` except `except`; true when at least one got it. */
  publish(topic: string, message: string, except: object | null): boolean {
    const set = this.byTopic.get(topic);
    if (set === undefined) return false;
    let sent = false;
    for (const c of set) if (c !== except && c.send(message) !== 2) sent = true;
    return sent;
  }
}
