// Presence options of a topic pattern (`app.topic(pattern, { presence })`): who is subscribed
// to a topic, one member per id however many sockets it has (docs/presence.md).
import type { Socket } from '../socket.ts';
import { checkKnownKeys } from '../../core/options-check.ts';

export interface PresenceOptions {
  /**
   * The member id of a socket, from what the route's `upgrade` hook returned. Sockets with
   * the same id are one member (one user, three tabs). Returning `undefined` or `null` leaves
   * the socket out of presence: it is subscribed and receives events, but is not listed.
   * Numbers are turned into strings. Default: `ws.data.id` (when a string or a number).
   */
  id?: (ws: Socket<any>) => string | number | null | undefined;
  /**
   * What the member shows to others (`{ id, data }`), taken from the member's first socket;
   * must be JSON-serializable. Default: no data.
   */
  data?: (ws: Socket<any>) => unknown;
  /**
   * Send `$join` and `$leave` topic events to the topic's subscribers when a member appears
   * or goes (on any server). Default false.
   */
  events?: boolean;
}

/** Presence options as checked: every field resolved. */
export interface ResolvedPresenceOptions {
  readonly id: (ws: Socket<any>) => string | number | null | undefined;
  readonly data: ((ws: Socket<any>) => unknown) | null;
  readonly events: boolean;
}

/** The default member id: `ws.data.id`. */
export const defaultPresenceId = (ws: Socket<any>): string | number | undefined => {
  const data = ws.data as { id?: unknown } | null | undefined;
  const id = typeof data === 'object' && data !== null ? data.id : undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
};

const KNOWN = Object.keys({ id: true, data: true, events: true } satisfies Record<keyof PresenceOptions, true>);

/** Checks presence options when the pattern is declared (`true` means the defaults). */
export function checkPresenceOptions(pattern: string, p: boolean | PresenceOptions): ResolvedPresenceOptions | null {
  if (p === false) return null;
  if (p === true) p = {};
  if (typeof p !== 'object' || p === null) throw new TypeError(`topic ${pattern}: presence must be true, false or an object`);
  checkKnownKeys(`topic ${pattern}: presence`, p, KNOWN);
  if (p.id !== undefined && typeof p.id !== 'function') throw new TypeError(`topic ${pattern}: presence.id must be a function (ws) => id`);
  if (p.data !== undefined && typeof p.data !== 'function')
    throw new TypeError(`topic ${pattern}: presence.data must be a function (ws) => data`);
  if (p.events !== undefined && typeof p.events !== 'boolean') throw new TypeError(`topic ${pattern}: presence.events must be a boolean`);
  return Object.freeze({ id: p.id ?? defaultPresenceId, data: p.data ?? null, events: p.events ?? false });
}
