// Presence options of a topic pattern (`app.topic(pattern, { presence })`): who is subscribed
// to a topic, one member per id however many sockets it has (docs/presence.md).

export interface PresenceOptions {}

/** Checks presence options when the pattern is declared (`true` means the defaults). */
export function checkPresenceOptions(pattern: string, p: boolean | PresenceOptions): Readonly<PresenceOptions> | null {
  if (p === false) return null;
  if (p === true) return Object.freeze({});
  if (typeof p !== 'object' || p === null) throw new TypeError(`topic ${pattern}: presence must be true, false or an object`);
  return Object.freeze({ ...p });
}
