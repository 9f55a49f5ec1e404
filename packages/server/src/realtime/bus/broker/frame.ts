// The bytes a broker bus puts on the wire (docs/protocol.md, "Bus frames"): an 11-byte
// header, then the message exactly as local subscribers got it. The header says who sent
// it (so a server drops its own message when the broker echoes it back) and whether it is
// a text or binary WebSocket message. The topic is not inside: the channel names it.
import { isUtf8 } from 'node:buffer';

export const FRAME_MAGIC = 0x54; // 'T'
export const FRAME_VERSION = 1;
export const HEADER_BYTES = 11;
export const ORIGIN_BYTES = 8;
/**
 * The first 6 bytes of an origin name the process: the worker threads of one cluster() process
 * share them (each adds its worker id), so a worker drops what its siblings published (they
 * already delivered it through the in-process mesh). A lone server's 8 bytes are all random.
 */
export const PROCESS_BYTES = 6;

/** Ask and Answer: app.requestAll() between servers (request-all-exchange.ts), JSON payloads. */
export const FrameKind = { Text: 0, Binary: 1, Presence: 2, Ask: 3, Answer: 4 } as const;
export type FrameKind = (typeof FrameKind)[keyof typeof FrameKind];

/**
 * Set on the kind byte of a Text or Binary frame that carries metadata (Bus.publish's `meta`):
 * a 2-byte big-endian length, that many bytes of JSON (an object of strings), then the
 * message. Frames without metadata are the version-1 bytes exactly.
 */
export const META_FLAG = 0x80;
/** Largest metadata (its JSON bytes) a frame carries. */
export const MAX_META_BYTES = 4096;

/** A random id for one bus instance (one process, or one worker with its own connection). */
export function newOrigin(): Buffer {
  const origin = Buffer.allocUnsafe(ORIGIN_BYTES);
  globalThis.crypto.getRandomValues(origin);
  return origin;
}

/**
 * The frame for one message: a single allocation, the payload copied once. `meta` is
 * metadata's JSON (metaJson()), or undefined for none.
 */
export function encodeFrame(origin: Buffer, kind: FrameKind, message: string | Uint8Array | ArrayBuffer, meta?: Buffer): Buffer {
  const at = meta === undefined ? HEADER_BYTES : HEADER_BYTES + 2 + meta.byteLength;
  let frame: Buffer;
  if (typeof message === 'string') {
    frame = Buffer.allocUnsafe(at + Buffer.byteLength(message));
    frame.write(message, at);
  } else {
    const bytes = message instanceof Uint8Array ? message : new Uint8Array(message);
    frame = Buffer.allocUnsafe(at + bytes.byteLength);
    frame.set(bytes, at);
  }
  frame[0] = FRAME_MAGIC;
  frame[1] = FRAME_VERSION;
  frame[2] = meta === undefined ? kind : kind | META_FLAG;
  origin.copy(frame, 3);
  if (meta !== undefined) {
    frame.writeUInt16BE(meta.byteLength, HEADER_BYTES);
    meta.copy(frame, HEADER_BYTES + 2);
  }
  return frame;
}

/** Metadata as frame bytes, or null when its JSON is over MAX_META_BYTES. */
export function metaJson(meta: Record<string, string>): Buffer | null {
  const json = Buffer.from(JSON.stringify(meta));
  return json.byteLength > MAX_META_BYTES ? null : json;
}

/** Where a sound frame's message starts (after the metadata, when it has some). */
export function payloadStart(frame: Uint8Array): number {
  return (frame[2]! & META_FLAG) === 0 ? HEADER_BYTES : HEADER_BYTES + 2 + ((frame[HEADER_BYTES]! << 8) | frame[HEADER_BYTES + 1]!);
}

/** A frame's metadata (checkFrame() passed it): its object, or a reason it is unreadable. */
export function readMeta(frame: Uint8Array): Record<string, string> | string {
  const length = (frame[HEADER_BYTES]! << 8) | frame[HEADER_BYTES + 1]!;
  let meta: unknown;
  try {
    meta = JSON.parse(Buffer.from(frame.buffer, frame.byteOffset + HEADER_BYTES + 2, length).toString());
  } catch {
    return 'metadata is not JSON';
  }
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return 'metadata is not an object';
  for (const key in meta) if (typeof (meta as Record<string, unknown>)[key] !== 'string') return 'metadata values must be strings';
  return meta as Record<string, string>;
}

/** Why a frame was refused, or null when it is sound. Never throws. */
export function checkFrame(frame: Uint8Array, maxPayload: number): string | null {
  if (!(frame instanceof Uint8Array)) return 'not bytes';
  if (frame.byteLength < HEADER_BYTES) return 'shorter than the header';
  if (frame[0] !== FRAME_MAGIC) return 'not a Tachyon bus frame';
  if (frame[1] !== FRAME_VERSION) return `unknown frame version ${frame[1]}`;
  const kind = frame[2]! & ~META_FLAG;
  if (kind > FrameKind.Answer) return `unknown frame kind ${frame[2]}`;
  let start = HEADER_BYTES;
  if ((frame[2]! & META_FLAG) !== 0) {
    if (kind > FrameKind.Binary) return 'a control frame with metadata';
    if (frame.byteLength < HEADER_BYTES + 2) return 'shorter than its metadata length';
    start = payloadStart(frame);
    if (start - HEADER_BYTES - 2 > MAX_META_BYTES) return `metadata over ${MAX_META_BYTES} bytes`;
    if (start > frame.byteLength) return 'shorter than its metadata';
  }
  if (frame.byteLength - start > maxPayload) return `payload over maxMessageSize (${frame.byteLength - start} > ${maxPayload} bytes)`;
  // A text message goes out to browsers as a text frame: it must be valid UTF-8.
  if (kind !== FrameKind.Binary && !isUtf8(frame.subarray(start))) return 'text payload is not valid UTF-8';
  return null;
}

/** True when the frame was sent by `origin` (the broker echoed our own message back), comparing its first `bytes`. */
export function sentBy(frame: Uint8Array, origin: Buffer, bytes: number = ORIGIN_BYTES): boolean {
  for (let i = 0; i < bytes; i++) if (frame[3 + i] !== origin[i]) return false;
  return true;
}

/** The origin of a frame as hex (presence bookkeeping, logs). */
export function originOf(frame: Uint8Array): string {
  return Buffer.from(frame.buffer, frame.byteOffset + 3, ORIGIN_BYTES).toString('hex');
}
