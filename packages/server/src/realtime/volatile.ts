// Volatile publishes (docs/realtime.md, "Volatile messages"): dropped, never queued, for a
// subscriber that has bytes waiting in its send buffer. uWS's native publish has no such
// mode (its fan-out queues for every subscriber up to maxBackpressure), so a volatile
// publish walks the topic's subscribers in JavaScript and checks each one's buffer first.
// That needs to know who is subscribed to what, which uWS does not expose per topic: this
// index is built on the first volatile publish (from every socket's getTopics()) and kept
// by subscribe, unsubscribe and close from then on. Apps that never publish volatile pay
// nothing for it.
import type { Socket } from './socket.ts';

export class TopicIndex {
  private readonly byTopic = new Map<string, Set<Socket<any>>>();

  add(s: Socket<any>, topic: string): void {
    const set = this.byTopic.get(topic);
    if (set === undefined) this.byTopic.set(topic, new Set([s]));
    else set.add(s);
  }

  remove(s: Socket<any>, topic: string): void {
    const set = this.byTopic.get(topic);
    if (set === undefined || !set.delete(s)) return;
    if (set.size === 0) this.byTopic.delete(topic);
  }

  /**
   * Sends `envelope` to each subscriber of `topic` whose send buffer is empty; the others
   * skip it. True when at least one subscriber got it.
   */
  publish(topic: string, envelope: string): boolean {
    const set = this.byTopic.get(topic);
    if (set === undefined) return false;
    let sent = false;
    for (const s of set) {
      const result = s._sendVolatile(envelope);
      if (result === 'sent' || result === 'backpressure') sent = true;
    }
    return sent;
  }
}
