// Presence announcements between processes (docs/protocol.md, "Presence on the bus"): JSON
// text on the reserved bus topic `__presence`, which the bus carries like any publish. Each
// process announces its own members: deltas as they happen, and a full snapshot every
// heartbeat that also says "still alive". Whatever arrives is checked here; a bad
// announcement is refused with a reason, never thrown.
import { isValidTopic } from '../protocol.ts';

export const PRESENCE_CHANNEL = '__presence';
export const WIRE_VERSION = 1;

/** A member as announced: its id and, when it has some, its data. */
export type WireMember = [id: string, data?: unknown];

export type Announcement =
  /**
   * Snapshot (heartbeat): every member this process has, per topic, in `of` parts (so that no
   * bus message grows past about 64 KiB); part `p` of snapshot number `n`. Once all parts of
   * one snapshot arrived, they replace what was known of the sender.
   */
  | { v: 1; o: string; k: 's'; ttl: number; n: number; p: number; of: number; m: [topic: string, members: WireMember[]][] }
  /** A member appeared on this process. */
  | { v: 1; o: string; k: 'j'; ttl: number; t: string; i: string; d?: unknown }
  /** A member left this process. */
  | { v: 1; o: string; k: 'l'; ttl: number; t: string; i: string }
  /** A process started: the others answer with a snapshot. */
  | { v: 1; o: string; k: 'h'; ttl: number }
  /** A process is closing: forget its members now. */
  | { v: 1; o: string; k: 'b' };

const MAX_ENTRIES = 1_000_000;
/** A snapshot part is cut once its members' ids and data pass this many characters. */
export const PART_CHARS = 64 * 1024;
const decoder = new TextDecoder('utf-8', { fatal: true });

const isId = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 1024;

/** Parses an announcement from the bus. Returns it, or why it was refused. Never throws. */
export function readAnnouncement(message: string | Uint8Array | ArrayBuffer): Announcement | string {
  let value: unknown;
  try {
    value = JSON.parse(typeof message === 'string' ? message : decoder.decode(message));
  } catch {
    return 'not JSON';
  }
  if (typeof value !== 'object' || value === null) return 'not an object';
  const a = value as Record<string, unknown>;
  if (a.v !== WIRE_VERSION) return `unknown version ${String(a.v)}`;
  if (typeof a.o !== 'string' || a.o.length === 0 || a.o.length > 64) return 'origin invalid';
  if (a.k === 'b') return a as Announcement;
  if (typeof a.ttl !== 'number' || !Number.isFinite(a.ttl) || a.ttl <= 0 || a.ttl > 3_600_000) return 'ttl invalid';
  switch (a.k) {
    case 'h':
      return a as Announcement;
    case 'j':
    case 'l':
      // The topic goes into event envelopes unescaped: it must be a valid topic name.
      if (!isValidTopic(a.t) || !isId(a.i)) return 'member invalid';
      return a as Announcement;
    case 's': {
      if (!Array.isArray(a.m)) return 'snapshot invalid';
      const whole = (v: unknown, max: number) => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= max;
      if (!whole(a.n, Number.MAX_SAFE_INTEGER) || !whole(a.of, 100_000) || (a.of as number) < 1 || !whole(a.p, (a.of as number) - 1))
        return 'snapshot part invalid';
      let n = 0;
      for (const entry of a.m) {
        if (!Array.isArray(entry) || !isValidTopic(entry[0]) || !Array.isArray(entry[1])) return 'snapshot entry invalid';
        for (const member of entry[1]) {
          if (!Array.isArray(member) || !isId(member[0])) return 'snapshot member invalid';
          if (++n > MAX_ENTRIES) return 'snapshot too large';
        }
      }
      return a as Announcement;
    }
    default:
      return `unknown kind ${String(a.k)}`;
  }
}
