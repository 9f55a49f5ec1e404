// Who is on each presence topic (docs/presence.md). This process's members are counted from
// its sockets: a member joins with its first socket on the topic and leaves with its last
// (unsubscribe or close). Other processes' members come from their announcements on the bus
// (wire.ts): deltas as they happen, a full snapshot each heartbeat. A process not heard from
// for three heartbeats (crashed, or cut off from the bus) has its members removed. A member
// present on several processes is one member: join and leave events fire when it appears
// anywhere and when it is gone everywhere, as this process sees it.
import type { Logger } from '../../core/logger.ts';
import type { Socket } from '../socket.ts';
import { topicEnvelope } from '../protocol.ts';
import type { ResolvedPresenceOptions } from './options.ts';
import { PART_CHARS, PRESENCE_CHANNEL, WIRE_VERSION, readAnnouncement, type Announcement, type WireMember } from './wire.ts';

/** One member of a presence topic, as `app.presence()` and `live.presence()` list it. */
export interface PresenceMember<Data = unknown> {
  id: string;
  /** What the topic's `presence.data` returned for the member's first socket (absent without it). */
  data?: Data;
}

/** What the tracker needs from the app's hub. */
export interface PresenceHost {
  /** The presence options of `topic`, or null when it has none. */
  lookup(topic: string): ResolvedPresenceOptions | null;
  /** Sends a text frame to this process's subscribers of `topic` (after the topic's queued publishes). */
  publishLocal(topic: string, message: string): void;
  /** The bus, when publishes go beyond this process; null otherwise. */
  readonly bus: { send(message: string): void; listen(): void } | null;
}

interface LocalMember {
  data: unknown;
  sockets: number;
  /** Characters of its id and JSON data: how snapshots are cut into parts. */
  size: number;
}

interface Peer {
  expires: number;
  topics: Map<string, Map<string, unknown>>;
  /** The parts received so far of the snapshot being assembled (number `n`). */
  pending: { n: number; of: number; parts: ([string, WireMember[]][] | undefined)[]; got: number } | null;
}

export interface PresenceStats {
  /** Presence topics with members on this process. */
  topics: number;
  /** Members on this process (over every topic). */
  members: number;
  /** Sockets counted in some member. */
  sockets: number;
  /** Other processes heard from. */
  peers: number;
  /** Announcements refused (bad JSON, bad shape). */
  rejected: number;
}

export class PresenceTracker {
  private readonly local = new Map<string, Map<string, LocalMember>>();
  /** Per socket: the presence topics it counts in, and its member id on each. */
  private readonly bySocket = new Map<Socket<any>, Map<string, string>>();
  private readonly peers = new Map<string, Peer>();
  private readonly origin = Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(8))).toString('hex');
  private readonly ttl: number;
  private timer: NodeJS.Timeout | null = null;
  private soon: NodeJS.Timeout | null = null;
  private stopped = false;
  private rejected = 0;
  /** Snapshots sent: each one's number, so that a receiver knows which parts belong together. */
  private snapshots = 0;

  private readonly host: PresenceHost;
  private readonly logger: Logger;
  /** Milliseconds between snapshots; a process is forgotten after three without news. */
  readonly heartbeat: number;

  constructor(host: PresenceHost, heartbeat: number, logger: Logger) {
    this.host = host;
    this.heartbeat = heartbeat;
    this.logger = logger;
    this.ttl = heartbeat * 3;
  }

  /** The app started: listen to the others, say hello, and beat. */
  start(): void {
    if (this.timer !== null || this.stopped) return;
    this.timer = setInterval(() => this.beat(), this.heartbeat);
    this.timer.unref();
    const bus = this.host.bus;
    if (bus === null) return;
    bus.listen();
    this.announce({ v: WIRE_VERSION, o: this.origin, k: 'h', ttl: this.ttl });
    this.snapshotSoon();
  }

  /** The app is closing: tell the others to forget this process's members now. */
  stop(): void {
    if (this.stopped) return;
    this.announce({ v: WIRE_VERSION, o: this.origin, k: 'b' });
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    if (this.soon !== null) clearTimeout(this.soon);
    this.timer = this.soon = null;
  }

  /** The options of a presence topic, or null. */
  options(topic: string): ResolvedPresenceOptions | null {
    return this.host.lookup(topic);
  }

  /** A socket subscribed to `topic` (it was not before). */
  subscribed(socket: Socket<any>, topic: string): void {
    const options = this.host.lookup(topic);
    if (options === null) return;
    const id = this.idOf(options, socket, topic);
    if (id === null) return;
    let topics = this.bySocket.get(socket);
    if (topics === undefined) this.bySocket.set(socket, (topics = new Map()));
    topics.set(topic, id);
    let members = this.local.get(topic);
    if (members === undefined) this.local.set(topic, (members = new Map()));
    const member = members.get(id);
    if (member !== undefined) {
      member.sockets++;
      return;
    }
    const [data, size] = this.dataOf(options, socket, topic);
    // Present elsewhere already (another process): no second $join. Only asked when events are on.
    const quiet = !options.events || this.has(topic, id);
    members.set(id, { data, sockets: 1, size: id.length + size + topic.length });
    if (!quiet) this.emit(options, topic, '$join', id, data);
    if (this.host.bus !== null)
      this.announce(
        data === undefined
          ? { v: WIRE_VERSION, o: this.origin, k: 'j', ttl: this.ttl, t: topic, i: id }
          : { v: WIRE_VERSION, o: this.origin, k: 'j', ttl: this.ttl, t: topic, i: id, d: data },
      );
  }

  /** A socket unsubscribed from `topic` (it was subscribed). */
  unsubscribed(socket: Socket<any>, topic: string): void {
    const topics = this.bySocket.get(socket);
    const id = topics?.get(topic);
    if (id === undefined) return;
    topics!.delete(topic);
    if (topics!.size === 0) this.bySocket.delete(socket);
    this.release(topic, id);
  }

  /** A socket closed: it leaves every presence topic it counted in. */
  closed(socket: Socket<any>): void {
    const topics = this.bySocket.get(socket);
    if (topics === undefined) return;
    this.bySocket.delete(socket);
    for (const [topic, id] of topics) this.release(topic, id);
  }

  /** Members of `topic` on every process this one hears from, this one first. */
  members(topic: string): PresenceMember[] {
    const out: PresenceMember[] = [];
    const seen = new Set<string>();
    const add = (id: string, data: unknown) => {
      if (seen.has(id)) return;
      seen.add(id);
      out.push(data === undefined ? { id } : { id, data });
    };
    for (const [id, m] of this.local.get(topic) ?? []) add(id, m.data);
    this.expire();
    for (const peer of this.peers.values()) for (const [id, data] of peer.topics.get(topic) ?? []) add(id, data);
    return out;
  }

  stats(): PresenceStats {
    let members = 0;
    for (const m of this.local.values()) members += m.size;
    return { topics: this.local.size, members, sockets: this.bySocket.size, peers: this.peers.size, rejected: this.rejected };
  }

  /** An announcement from another process, off the bus. Never throws. */
  receive(message: string | Uint8Array | ArrayBuffer): void {
    const a = readAnnouncement(message);
    if (typeof a === 'string') return this.reject(a);
    if (a.o === this.origin || this.stopped) return; // our own, echoed back
    if (a.k === 'b') return this.forget(a.o);
    let peer = this.peers.get(a.o);
    if (peer === undefined) this.peers.set(a.o, (peer = { expires: 0, topics: new Map(), pending: null }));
    peer.expires = Date.now() + a.ttl;
    switch (a.k) {
      case 'h':
        return this.snapshotSoon();
      case 'j':
        return this.peerJoin(peer, a.t, a.i, a.d);
      case 'l':
        return this.peerLeave(peer, a.t, a.i);
      case 's':
        return this.peerSnapshotPart(peer, a.n, a.p, a.of, a.m);
    }
  }

  private idOf(options: ResolvedPresenceOptions, socket: Socket<any>, topic: string): string | null {
    try {
      const id = options.id(socket);
      if (typeof id === 'string' && id.length > 0 && id.length <= 1024) return id;
      if (typeof id === 'number' && Number.isFinite(id)) return String(id);
      if (id !== undefined && id !== null)
        this.logger.warn(
          { topic, type: typeof id },
          'presence: id must be a non-empty string (at most 1024 characters) or a number; socket not counted',
        );
    } catch (err) {
      this.logger.error({ err, topic }, 'presence id function failed; socket not counted');
    }
    return null;
  }

  /** The member's data and the length of its JSON. */
  private dataOf(options: ResolvedPresenceOptions, socket: Socket<any>, topic: string): [unknown, number] {
    if (options.data === null) return [undefined, 0];
    try {
      const data = options.data(socket);
      // Checked once per member: it travels as JSON (replies, events, the bus).
      return data === undefined ? [undefined, 0] : [data, JSON.stringify(data).length];
    } catch (err) {
      this.logger.error({ err, topic }, 'presence data function failed or returned non-JSON data; member shown without data');
      return [undefined, 0];
    }
  }

  /** One socket of member `id` is gone from `topic`. */
  private release(topic: string, id: string): void {
    const members = this.local.get(topic);
    const member = members?.get(id);
    if (member === undefined) return;
    if (--member.sockets > 0) return;
    members!.delete(id);
    if (members!.size === 0) this.local.delete(topic);
    if (this.host.bus !== null) this.announce({ v: WIRE_VERSION, o: this.origin, k: 'l', ttl: this.ttl, t: topic, i: id });
    const options = this.host.lookup(topic);
    if (options?.events && !this.has(topic, id)) this.emit(options, topic, '$leave', id, member.data);
  }

  /** True when `id` is on `topic` here or on a process heard from. */
  private has(topic: string, id: string): boolean {
    if (this.local.get(topic)?.has(id)) return true;
    for (const peer of this.peers.values()) if (peer.topics.get(topic)?.has(id)) return true;
    return false;
  }

  private emit(options: ResolvedPresenceOptions, topic: string, event: '$join' | '$leave', id: string, data: unknown): void {
    if (!options.events) return;
    this.host.publishLocal(topic, topicEnvelope(topic, event, JSON.stringify(data === undefined ? { id } : { id, data })));
  }

  private peerJoin(peer: Peer, topic: string, id: string, data: unknown): void {
    const options = this.host.lookup(topic);
    if (options === null) return; // not a presence topic here: nothing to keep
    const present = this.has(topic, id);
    let members = peer.topics.get(topic);
    if (members === undefined) peer.topics.set(topic, (members = new Map()));
    members.set(id, data);
    if (!present) this.emit(options, topic, '$join', id, data);
  }

  private peerLeave(peer: Peer, topic: string, id: string): void {
    const members = peer.topics.get(topic);
    if (members === undefined || !members.has(id)) return;
    const data = members.get(id);
    members.delete(id);
    if (members.size === 0) peer.topics.delete(topic);
    const options = this.host.lookup(topic);
    if (options !== null && !this.has(topic, id)) this.emit(options, topic, '$leave', id, data);
  }

  /** Collects the parts of a snapshot; a newer snapshot abandons an unfinished older one. */
  private peerSnapshotPart(peer: Peer, n: number, p: number, of: number, m: [string, WireMember[]][]): void {
    let pending = peer.pending;
    if (pending !== null && n < pending.n) return; // a late part of an abandoned snapshot
    if (pending === null || pending.n !== n || pending.of !== of) peer.pending = pending = { n, of, parts: new Array(of), got: 0 };
    if (pending.parts[p] !== undefined) return;
    pending.parts[p] = m;
    if (++pending.got < of) return;
    peer.pending = null;
    this.peerSnapshot(peer, pending.parts.flat() as [string, WireMember[]][]);
  }

  /** A full snapshot replaces what was known of the peer: the differences become joins and leaves. */
  private peerSnapshot(peer: Peer, snapshot: [string, WireMember[]][]): void {
    const next = new Map<string, Map<string, unknown>>();
    for (const [topic, list] of snapshot) {
      if (list.length === 0 || this.host.lookup(topic) === null) continue;
      // A topic cut between two parts appears in both.
      let members = next.get(topic);
      if (members === undefined) next.set(topic, (members = new Map()));
      for (const [id, data] of list) members.set(id, data);
    }
    for (const [topic, members] of [...peer.topics]) {
      for (const id of [...members.keys()]) if (!next.get(topic)?.has(id)) this.peerLeave(peer, topic, id);
    }
    for (const [topic, members] of next) {
      for (const [id, data] of members) {
        const known = peer.topics.get(topic);
        if (known?.has(id)) known.set(id, data);
        else this.peerJoin(peer, topic, id, data);
      }
    }
  }

  /** Removes a peer and its members (closed, or not heard from in time). */
  private forget(origin: string): void {
    const peer = this.peers.get(origin);
    if (peer === undefined) return;
    for (const [topic, members] of [...peer.topics]) for (const id of [...members.keys()]) this.peerLeave(peer, topic, id);
    this.peers.delete(origin);
  }

  private expire(): void {
    const now = Date.now();
    for (const [origin, peer] of this.peers) {
      if (peer.expires >= now) continue;
      this.logger.info(
        { origin, members: [...peer.topics.values()].reduce((n, m) => n + m.size, 0) },
        'presence: a process went silent; its members are removed',
      );
      this.forget(origin);
    }
  }

  private beat(): void {
    this.expire();
    this.snapshot();
  }

  private snapshotSoon(): void {
    if (this.soon !== null || this.stopped || this.host.bus === null) return;
    this.soon = setTimeout(() => {
      this.soon = null;
      this.snapshot();
    }, 20);
    this.soon.unref();
  }

  /** Sends every local member, cut into parts of about PART_CHARS (bus messages stay small). */
  private snapshot(): void {
    if (this.host.bus === null || this.stopped) return;
    const parts: [string, WireMember[]][][] = [];
    let part: [string, WireMember[]][] = [];
    let chars = 0;
    for (const [topic, members] of this.local) {
      let list: WireMember[] = [];
      part.push([topic, list]);
      for (const [id, member] of members) {
        if (chars > PART_CHARS) {
          parts.push(part);
          part = [[topic, (list = [])]];
          chars = 0;
        }
        list.push(member.data === undefined ? [id] : [id, member.data]);
        chars += member.size + 8;
      }
    }
    parts.push(part);
    const n = ++this.snapshots;
    for (let p = 0; p < parts.length; p++)
      this.announce({ v: WIRE_VERSION, o: this.origin, k: 's', ttl: this.ttl, n, p, of: parts.length, m: parts[p]! });
  }

  private announce(a: Announcement): void {
    const bus = this.host.bus;
    if (bus === null || this.stopped) return;
    bus.send(JSON.stringify(a));
  }

  private reject(reason: string): void {
    const n = ++this.rejected;
    if ((n & (n - 1)) === 0)
      this.logger.warn({ reason, rejected: n }, `presence: dropped a bad announcement from the bus (${PRESENCE_CHANNEL})`);
  }
}
