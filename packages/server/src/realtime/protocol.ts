// Tachyon's WebSocket wire format (docs/protocol.md): envelope builders, name checks and
// the byte-prefix test that keeps JSON.parse off every frame that is not ours.

/** Client frames the server interprets start with these bytes: `{"type":"`. */
const CONTROL_PREFIX = [0x7b, 0x22, 0x74, 0x79, 0x70, 0x65, 0x22, 0x3a, 0x22];

/** One comparison per byte of a 9-byte prefix, no decoding, no JSON.parse. */
export function isControlFrame(bytes: Uint8Array): boolean {
  if (bytes.length < 9) return false;
  for (let i = 0; i < 9; i++) if (bytes[i] !== CONTROL_PREFIX[i]) return false;
  return true;
}

export const RESERVED_PREFIX = '__';
// Printable ASCII without `"` and `\`: such names go into envelopes without escaping.
const NAME = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

// Apps publish to a bounded set of names: check each once.
const checkedTopics = new Set<string>();
const checkedEvents = new Set<string>();

function isValidName(value: unknown, max: number, checked: Set<string>): value is string {
  if (typeof value !== 'string') return false;
  if (checked.has(value)) return true;
  if (value.length < 1 || value.length > max || !NAME.test(value)) return false;
  if (checked.size < 10_000) checked.add(value);
  return true;
}

export const isValidTopic = (topic: unknown): topic is string => isValidName(topic, 256, checkedTopics);
export const isValidEventName = (event: unknown): event is string => isValidName(event, 128, checkedEvents);

export function assertTopic(topic: string): void {
  if (!isValidTopic(topic))
    throw new TypeError(`Invalid topic ${JSON.stringify(topic)}: 1-256 printable ASCII characters, no quotes or backslashes`);
}

export function assertEventName(event: string): void {
  if (!isValidEventName(event))
    throw new TypeError(`Invalid event name ${JSON.stringify(event)}: 1-128 printable ASCII characters, no quotes or backslashes`);
}

/** JSON text of `data`, or undefined when there is none. Serialized once per publish. */
export function encodeData(data: unknown): string | undefined {
  if (data === undefined) return undefined;
  const json = JSON.stringify(data);
  if (json === undefined) throw new TypeError('Event data is not JSON-serializable');
  return json;
}

/** `{"topic":…,"event":…,"data":…}` by string template: names were validated, data is JSON. */
export function topicEnvelope(topic: string, event: string, json: string | undefined): string {
  return json === undefined ? `{"topic":"${topic}","event":"${event}"}` : `{"topic":"${topic}","event":"${event}","data":${json}}`;
}

export function directEnvelope(event: string, json: string | undefined): string {
  return json === undefined ? `{"event":"${event}"}` : `{"event":"${event}","data":${json}}`;
}

export type ErrorCode =
  | 'BAD_FRAME'
  | 'UNKNOWN_EVENT'
  | 'VALIDATION'
  | 'HANDLER_ERROR'
  | 'RATE_LIMITED'
  | 'DENIED'
  | 'NO_PRESENCE'
  | 'UNAVAILABLE';

const ref = (r: number | undefined) => (r === undefined ? '' : `,"ref":${r}`);

export const replyFrame = (r: number, json: string | undefined) =>
  json === undefined ? `{"type":"reply","ref":${r}}` : `{"type":"reply","ref":${r},"data":${json}}`;
export const subscribedFrame = (topic: string, r: number | undefined) => `{"type":"subscribed","topic":${JSON.stringify(topic)}${ref(r)}}`;
export const unsubscribedFrame = (topic: string, r: number | undefined) =>
  `{"type":"unsubscribed","topic":${JSON.stringify(topic)}${ref(r)}}`;
export const deniedFrame = (topic: unknown, r: number | undefined, reason: string) =>
  `{"type":"denied","topic":${JSON.stringify(typeof topic === 'string' ? topic : String(topic))}${ref(r)},"reason":${JSON.stringify(reason)}}`;
export const pongFrame = (r: number | undefined) => `{"type":"pong"${ref(r)}}`;

export function errorFrame(r: number | undefined, code: ErrorCode, message: string, issues?: unknown): string {
  return JSON.stringify({ type: 'error', ref: r, code, message, issues });
}

/** A valid ref is an integer 0 ≤ ref < 2^53; anything else counts as absent. */
export function readRef(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** Close codes after which clients must not reconnect. */
export const TERMINAL_CLOSE_CODES = [1008, 4401, 4403] as const;
export const CLOSE_GOING_AWAY = 1001;
export const CLOSE_TOO_BIG = 1009;
export const CLOSE_TOO_SLOW = 4429;
/** Kept sending past the route's messagesPerSecond after RATE_LIMITED replies. */
export const CLOSE_RATE_LIMITED = 4430;
