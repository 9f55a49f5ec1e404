// Who is subscribed to what, in JavaScript: uWS keeps its topics in C++ and can count a
// topic's subscribers but not list them. Two features need the list:
// - volatile publishes (docs/realtime.md, "Volatile messages"): uWS's native fan-out queues
//   for every subscriber up to maxBackpressure and cannot skip one, so a volatile publish
//   walks the subscribers and sends only to those with an empty send buffer;
// - app.requestAll(): one request per subscriber.
// The index is built on the first use (from every open socket's getTopics()) and kept by
// subscribe, unsubscribe and close from then on: apps that use neither pay nothing.
import { sendVolatile, type Socket } from './socket.ts';

export class SubscriberIndex {
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

  /** This process's subscribers of `topic` (a live set: copy it before awaiting). */
  of(topic: string): ReadonlySet<Socket<any>> | undefined {
    return this.byTopic.get(topic);
  }

  /**
   * Sends `envelope` to each subscriber of `topic` whose send buffer is empty; the others
   * skip it. True when at least one subscriber got it.
   */
  publishVolatile(topic: string, envelope: string): boolean {
    const set = this.byTopic.get(topic);
    if (set === undefined) return false;
    let sent = false;
    for (const s of set) {
      const result = sendVolatile(s, envelope, false);
      if (result === 'sent' || result === 'backpressure') sent = true;
    }
    return sent;
  }
}
