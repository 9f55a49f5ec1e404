// The envelope of a publish on a history topic (docs/protocol.md, "Positions"): today's
// envelope with `offset` and `epoch` after `event`, before `data`, in that fixed order, so a
// client (or the hub) finds the position without parsing the data.

/** `{"topic":…,"event":…,"offset":…,"epoch":…,"data":…}`: names were validated, epochs are base64url. */
export function positionedEnvelope(topic: string, event: string, json: string | undefined, offset: number, epoch: string): string {
  const head = `{"topic":"${topic}","event":"${event}","offset":${offset},"epoch":"${epoch}"`;
  return json === undefined ? `${head}}` : `${head},"data":${json}}`;
}

const OFFSET = ',"offset":';

/** The offset in a positioned envelope, or -1 (a raw message, or an envelope without position). */
export function offsetOf(envelope: string): number {
  // The event name holds no `"` (protocol.ts), so the first `,"offset":` is ours, not the data's.
  const at = envelope.indexOf(OFFSET);
  if (at < 0 || !envelope.startsWith('{"topic":"')) return -1;
  const end = envelope.indexOf(',', at + OFFSET.length);
  const n = Number(envelope.slice(at + OFFSET.length, end));
  return Number.isSafeInteger(n) ? n : -1;
}

const EPOCH = ',"epoch":"';

/**
 * `{"topic":…,"offset":…,"epoch":…}`: where a positioned envelope went, for the socket that
 * published it (publishExcept skips the sender, and its client must still move past the
 * offset: docs/protocol.md, "Positions"). Null for an envelope without a position.
 */
export function positionFrame(topic: string, envelope: string): string | null {
  const at = envelope.indexOf(OFFSET);
  const epoch = at < 0 ? -1 : envelope.indexOf(EPOCH, at);
  if (epoch < 0) return null;
  return `{"topic":"${topic}"${envelope.slice(at, envelope.indexOf('"', epoch + EPOCH.length) + 1)}}`;
}
